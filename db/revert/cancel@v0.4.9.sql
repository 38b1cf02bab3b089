-- Revert taskboard:cancel to its v0.4.4 definition, and its comment

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- cancel(job_id) -> boolean
-- An administrator stops a job: queued or running becomes cancelled with
-- finished_at. A holder's token stops being current, so its later renew,
-- complete, fail and release answer NULL/false.
-- true:  cancelled now.
-- false: the job is already finished (succeeded, dead, cancelled) or unknown.
-- Raises 22023 when job_id is NULL.

CREATE OR REPLACE FUNCTION taskboard.cancel(job_id bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF cancel.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = pg_catalog.clock_timestamp()
     WHERE j.id = cancel.job_id
       AND j.state IN ('queued', 'running');

    RETURN FOUND;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.cancel(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint)
    TO :"admin_role";

COMMENT ON FUNCTION taskboard.cancel(bigint) IS
$comment$cancel(job_id) -> boolean
An administrator stops a job: queued or running becomes cancelled with
finished_at. A holder's token stops being current, so its later renew,
complete, fail and release answer NULL/false.
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
