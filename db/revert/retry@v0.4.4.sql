-- Revert taskboard:retry to its v0.4.1 definition

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
-- queued again, runnable now, with its attempts reset; its error history is
-- kept. Sends NOTIFY taskboard, '<queue>'.
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
    v_queue text;
BEGIN
    IF retry.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    BEGIN
        UPDATE taskboard.jobs AS j
           SET state = 'queued',
               run_at = pg_catalog.clock_timestamp(),
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue INTO v_queue;
    EXCEPTION
        WHEN unique_violation THEN
            -- jobs_unfinished_dedupe_key: another unfinished job holds the key.
            RETURN false;
    END;
    IF v_queue IS NULL THEN
        RETURN false;
    END IF;

    PERFORM taskboard.notify_runnable(v_queue);
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.retry(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.retry(bigint)
    TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
