-- set_limit(queue, what, value) -> boolean
-- Internal: the write of a queue's limit, `what` naming its column:
-- 'max_running' (taskboard.set_queue_limit) or 'max_running_per_key'
-- (taskboard.set_key_limit). A limit given (not NULL) takes the queue's
-- claim lock (1952605797, hashtext(queue)) exclusively first, and so waits
-- for the claim transactions of the queue still open; claims that come
-- meanwhile wait for this transaction and then read the limit
-- (taskboard.claim). Always, not only for a first limit: a removal of the
-- limit not yet committed would otherwise let a limit set just after it
-- pass unlocked, though claims made meanwhile did not count. Writes the
-- queue's row (made when it has none and a limit is given); listeners are
-- told when the queue has a job runnable now. True when this call changed
-- the limit, false when it already was `value` (a NULL for a queue without
-- a row: it has no limit to remove).
-- Raises 22023 when queue is NULL, empty or longer than 200 characters, or
-- value is below 1 (pause the queue to stop it).
-- Called by set_queue_limit and set_key_limit; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.set_limit(queue text, what text, value integer)
 RETURNS boolean
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_queue_limit boolean := set_limit.what = 'max_running';
BEGIN
    v_checked := taskboard.check_name('queue', set_limit.queue);
    v_checked := taskboard.check_limit(set_limit.what, set_limit.value, NULL,
                     CASE WHEN v_queue_limit THEN 'no limit' ELSE 'no key limit' END);
    IF set_limit.value IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_limit.queue));
    ELSIF NOT EXISTS (SELECT FROM taskboard.queues AS r WHERE r.queue = set_limit.queue) THEN
        RETURN false;
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running, max_running_per_key)
    VALUES (set_limit.queue,
            CASE WHEN v_queue_limit THEN set_limit.value END,
            CASE WHEN NOT v_queue_limit THEN set_limit.value END)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running = CASE WHEN v_queue_limit THEN EXCLUDED.max_running ELSE q.max_running END,
           max_running_per_key = CASE WHEN v_queue_limit THEN q.max_running_per_key
                                      ELSE EXCLUDED.max_running_per_key END,
           updated_at = pg_catalog.clock_timestamp()
     WHERE CASE WHEN v_queue_limit THEN q.max_running IS DISTINCT FROM EXCLUDED.max_running
                ELSE q.max_running_per_key IS DISTINCT FROM EXCLUDED.max_running_per_key END;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM taskboard.notify_runnable(j.queue)
       FROM taskboard.jobs AS j
      WHERE j.queue = set_limit.queue AND j.state = 'queued' AND j.run_at <= pg_catalog.clock_timestamp()
      LIMIT 1;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.set_limit(text,text,integer) FROM PUBLIC;
