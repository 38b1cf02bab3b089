-- Deploy taskboard:set_queue_limit to pg
-- requires: set_queue_limit@v0.4.4
-- requires: queues
-- requires: notify_runnable
-- requires: checks
-- requires: claim
--
-- A first limit (the queue had none) takes the queue's claim lock
-- exclusively before it is written: it waits for the claim transactions of
-- the queue still open, and the claims that come meanwhile wait for it
-- (taskboard.claim). Changing or removing a limit is as it was.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.set_queue_limit(queue text, max_running integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', set_queue_limit.queue);
    IF set_queue_limit.max_running < 1 THEN
        RAISE EXCEPTION 'max_running must be at least 1 or NULL (no limit), got %; pause the queue to stop it',
            set_queue_limit.max_running
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A first limit must count the claims still in flight: each holds the
    -- queue's claim lock, shared, until its transaction ends. Taken
    -- exclusively here, it waits for them; claims that come meanwhile wait
    -- for this transaction and then read the limit (taskboard.claim).
    IF set_queue_limit.max_running IS NOT NULL
       AND NOT EXISTS (SELECT FROM taskboard.queues AS q
                        WHERE q.queue = set_queue_limit.queue
                          AND q.max_running IS NOT NULL) THEN
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

COMMENT ON FUNCTION taskboard.set_queue_limit(text,integer) IS
$comment$set_queue_limit(queue, max_running) -> boolean
From the next claim on, claim never lets more than `max_running` jobs of
`queue` run at once, counted across all workers and also under
concurrent claimers (claimers of a limited queue take turns on its row).
A first limit (the queue had none) counts the claims already made: it
waits for the claim transactions of the queue still open, and claims of
the queue wait for it until this call's transaction ends.
Jobs already running over a lowered limit carry on; no new one starts
until the queue is under it. NULL removes the limit. Listeners are told
when a raised or removed limit leaves a job runnable now. True when this
call changed the limit, false when it already was `max_running`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running is below 1 (pause the queue to stop it).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_queue_limit(text, integer) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
