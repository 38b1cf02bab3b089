-- Revert taskboard:get_job to its v0.6.0 definition
--
-- Puts back the definition and comment of release 0.6.0.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.get_job(job_id bigint)
RETURNS taskboard.job_info
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_job taskboard.job_info;
BEGIN
    IF get_job.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence
      INTO v_job
      FROM taskboard.jobs AS j
     WHERE j.id = get_job.job_id;

    RETURN v_job;
END
$function$;

COMMENT ON FUNCTION taskboard.get_job(bigint) IS
$comment$get_job(job_id) -> taskboard.job_info
What a producer may see of a job: everything but the lease token.
started_at is when its last claim started it (NULL until claimed).
errors lists each failed attempt as {error, attempt, worker, at}, with a
traceback when the worker sent one (fail bounds it). payload is what the
job was enqueued with; fence is the number of its latest claim (0 before
the first).
A row of NULLs for an unknown id.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.get_job(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint)
    TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
