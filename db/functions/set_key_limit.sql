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
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', set_key_limit.queue);
    IF set_key_limit.max_running_per_key < 1 THEN
        RAISE EXCEPTION 'max_running_per_key must be at least 1 or NULL (no key limit), got %; pause the queue to stop it',
            set_key_limit.max_running_per_key
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A key limit must count the claims still in flight, as a first queue
    -- limit does (taskboard.set_queue_limit): each claim holds the queue's
    -- claim lock, shared, until its transaction ends, and this call waits
    -- for them. Always, not only when the queue has no key limit yet: a
    -- removal of the limit not yet committed would otherwise let a limit
    -- set just after it pass unlocked, though claims made meanwhile did
    -- not count.
    IF set_key_limit.max_running_per_key IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_key_limit.queue));
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running_per_key)
    VALUES (set_key_limit.queue, set_key_limit.max_running_per_key)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running_per_key = EXCLUDED.max_running_per_key,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.max_running_per_key IS DISTINCT FROM EXCLUDED.max_running_per_key;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_key_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_key_limit.queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.set_key_limit(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.set_key_limit(text,integer) TO taskboard_admin;
