-- set_queue_limit(queue, max_running) -> boolean
-- From the next claim on, claim never lets more than `max_running` jobs of
-- `queue` run at once, counted across all workers and also under
-- concurrent claimers (claimers of a limited queue take turns on its row).
-- A limit counts the claims already made: setting one waits for the claim
-- transactions of the queue still open, and claims of the queue wait for it
-- until this call's transaction ends.
-- Jobs already running over a lowered limit carry on; no new one starts
-- until the queue is under it. NULL removes the limit. Listeners are told
-- when a raised or removed limit leaves a job runnable now. True when this
-- call changed the limit, false when it already was `max_running`.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters, or
-- max_running is below 1 (pause the queue to stop it).

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.set_queue_limit(queue text, max_running integer)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN taskboard.set_limit(queue, 'max_running'::text, max_running);

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_queue_limit(text,integer) TO taskboard_admin;
