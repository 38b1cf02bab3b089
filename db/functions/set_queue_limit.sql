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
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', set_queue_limit.queue);
    IF set_queue_limit.max_running < 1 THEN
        RAISE EXCEPTION 'max_running must be at least 1 or NULL (no limit), got %; pause the queue to stop it',
            set_queue_limit.max_running
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A limit must count the claims still in flight: each holds the
    -- queue's claim lock, shared, until its transaction ends. Taken
    -- exclusively here, it waits for them; claims that come meanwhile wait
    -- for this transaction and then read the limit (taskboard.claim).
    -- Always, not only for a first limit: a removal of the limit not yet
    -- committed would otherwise let a limit set just after it pass
    -- unlocked, though claims made meanwhile did not count.
    IF set_queue_limit.max_running IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_queue_limit.queue));
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running)
    VALUES (set_queue_limit.queue, set_queue_limit.max_running)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running = EXCLUDED.max_running,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.max_running IS DISTINCT FROM EXCLUDED.max_running;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_queue_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_queue_limit.queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_queue_limit(text,integer) TO taskboard_admin;
