-- Revert taskboard:retry to its v0.4.4 definition, and its comment

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- retry(job_id) -> boolean
-- An administrator gives a dead or cancelled job another chance: it is
-- queued again with its attempts reset; its error history is kept. It is
-- runnable now, and NOTIFY taskboard, '<queue>' is sent; except a cancelled
-- job whose last lease has not run out yet (cancelled while running, or
-- just after its holder handed it back): that one is runnable when the
-- lease ends. Until then its holder may still believe it holds the job
-- (cancel leaves the token and deadline it was given): its writes are
-- refused, but an effect outside the database is not, and a second holder
-- must not start beside it.
-- true:  queued again.
-- false: the job is not dead or cancelled (or unknown), or its dedupe_key is
--        now held by another unfinished job of the queue; nothing changes.
-- Raises 22023 when job_id is NULL.

CREATE OR REPLACE FUNCTION taskboard.retry(job_id bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_queue text;
    v_run_at timestamptz;
BEGIN
    IF retry.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    BEGIN
        UPDATE taskboard.jobs AS j
           SET state = 'queued',
               run_at = CASE WHEN j.state = 'cancelled' AND j.lease_expires_at > v_now
                             THEN j.lease_expires_at
                             ELSE v_now
                        END,
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue, j.run_at INTO v_queue, v_run_at;
    EXCEPTION
        WHEN unique_violation THEN
            -- jobs_unfinished_dedupe_key: another unfinished job holds the key.
            RETURN false;
    END;
    IF v_queue IS NULL THEN
        RETURN false;
    END IF;

    IF v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.retry(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.retry(bigint)
    TO :"admin_role";

COMMENT ON FUNCTION taskboard.retry(bigint) IS
$comment$retry(job_id) -> boolean
An administrator gives a dead or cancelled job another chance: it is
queued again with its attempts reset; its error history is kept. It is
runnable now, and NOTIFY taskboard, '<queue>' is sent; except a cancelled
job whose last lease has not run out yet (cancelled while running, or
just after its holder handed it back): that one is runnable when the
lease ends. Until then its holder may still believe it holds the job
(cancel leaves the token and deadline it was given): its writes are
refused, but an effect outside the database is not, and a second holder
must not start beside it.
true:  queued again.
false: the job is not dead or cancelled (or unknown), or its dedupe_key is
       now held by another unfinished job of the queue; nothing changes.
Raises 22023 when job_id is NULL.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
