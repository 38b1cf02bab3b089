-- set_key_limit(queue, max_running_per_key) -> boolean
-- From the next claim on, claim never lets more than `max_running_per_key`
-- jobs of one concurrency key of `queue` hold a lease at once (a lease that
-- expired counts until its job is reclaimed or finished, a cancelled job's
-- until it ends), counted across all workers and under concurrent
-- claimers; jobs of other keys and jobs without a key are still claimed.
-- A key limit counts the claims already made: setting one waits for the
-- claim transactions of the queue still open. NULL
-- removes the key limit. True when this call changed it, false when it
-- already was `max_running_per_key`.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters, or
-- max_running_per_key is below 1 (pause the queue to stop it).

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN taskboard.set_limit(queue, 'max_running_per_key'::text, max_running_per_key);

REVOKE ALL ON FUNCTION taskboard.set_key_limit(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_key_limit(text,integer) TO taskboard_admin;
