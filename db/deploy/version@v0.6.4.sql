-- Deploy taskboard:version to pg
--
-- Release 0.6.4: written by `make schema` from the function files (never by
-- hand), those that differ from release 0.6.3's.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- taskboard.set_key_limit
CREATE OR REPLACE FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN taskboard.set_limit(queue, 'max_running_per_key'::text, max_running_per_key);

COMMENT ON FUNCTION taskboard.set_key_limit(text,integer) IS
$comment$set_key_limit(queue, max_running_per_key) -> boolean
From the next claim on, claim never lets more than `max_running_per_key`
jobs of one concurrency key of `queue` hold a lease at once (a lease that
expired counts until its job is reclaimed or finished, a cancelled job's
until it ends), counted across all workers and under concurrent
claimers; jobs of other keys and jobs without a key are still claimed.
A key limit counts the claims already made: setting one waits for the
claim transactions of the queue still open. NULL
removes the key limit. True when this call changed it, false when it
already was `max_running_per_key`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running_per_key is below 1 (pause the queue to stop it).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_key_limit(text,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_key_limit(text,integer) TO :"admin_role";

-- taskboard.set_limit
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

COMMENT ON FUNCTION taskboard.set_limit(text,text,integer) IS
$comment$set_limit(queue, what, value) -> boolean
Internal: the write of a queue's limit, `what` naming its column:
'max_running' (taskboard.set_queue_limit) or 'max_running_per_key'
(taskboard.set_key_limit). A limit given (not NULL) takes the queue's
claim lock (1952605797, hashtext(queue)) exclusively first, and so waits
for the claim transactions of the queue still open; claims that come
meanwhile wait for this transaction and then read the limit
(taskboard.claim). Always, not only for a first limit: a removal of the
limit not yet committed would otherwise let a limit set just after it
pass unlocked, though claims made meanwhile did not count. Writes the
queue's row (made when it has none and a limit is given); listeners are
told when the queue has a job runnable now. True when this call changed
the limit, false when it already was `value` (a NULL for a queue without
a row: it has no limit to remove).
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
value is below 1 (pause the queue to stop it).
Called by set_queue_limit and set_key_limit; never granted to an
application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.set_limit(text,text,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.set_queue_limit
CREATE OR REPLACE FUNCTION taskboard.set_queue_limit(queue text, max_running integer)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN taskboard.set_limit(queue, 'max_running'::text, max_running);

COMMENT ON FUNCTION taskboard.set_queue_limit(text,integer) IS
$comment$set_queue_limit(queue, max_running) -> boolean
From the next claim on, claim never lets more than `max_running` jobs of
`queue` run at once, counted across all workers and also under
concurrent claimers (claimers of a limited queue take turns on its row).
A limit counts the claims already made: setting one waits for the claim
transactions of the queue still open, and claims of the queue wait for it
until this call's transaction ends.
Jobs already running over a lowered limit carry on; no new one starts
until the queue is under it. NULL removes the limit. Listeners are told
when a raised or removed limit leaves a job runnable now. True when this
call changed the limit, false when it already was `max_running`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running is below 1 (pause the queue to stop it).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(text,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_queue_limit(text,integer) TO :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.6.4'::text
$function$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
