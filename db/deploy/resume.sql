-- Deploy taskboard:resume to pg
-- requires: resume@v0.4.2
-- requires: queues
-- requires: notify_runnable
-- requires: checks
--
-- The queue is checked by taskboard.check_name, with the messages it always had;
-- the contract, the function's comment, is unchanged.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.resume(queue text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', resume.queue);

    UPDATE taskboard.queues AS q
       SET paused = false,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.queue = resume.queue
       AND q.paused;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = resume.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(resume.queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.resume(text) IS
$comment$resume(queue) -> boolean
Resumes a paused `queue`: claim hands out its jobs again, and listeners
are told when one is runnable now (NOTIFY, unless taskboard.notify =
off). True when this call resumed it, false when it was not paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.resume(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.resume(text) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
