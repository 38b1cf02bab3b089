-- get_job(job_id) -> taskboard.job_info
-- What a producer may see of a job: everything but the lease token.
-- started_at is when its last claim started it (NULL until claimed).
-- errors lists each failed attempt as {error, attempt, worker, at}, with a
-- traceback when the worker sent one (fail bounds it). payload is what the
-- job was enqueued with; fence is the number of its latest claim (0 before
-- the first). concurrency_key is the key the job was enqueued with (NULL:
-- none). waiting_for, for a waiting job, lists the ids of the dependencies
-- it still waits for, in id order (each leaves the list as it ends); NULL
-- for a job in any other state.
-- A row of NULLs for an unknown id.
-- Raises 22023 when job_id is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.get_job(job_id bigint)
 RETURNS taskboard.job_info
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_job taskboard.job_info;
BEGIN
    v_checked := taskboard.check_given('job_id', get_job.job_id);

    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      INTO v_job
      FROM taskboard.jobs AS j
     WHERE j.id = get_job.job_id;

    RETURN v_job;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.get_job(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO taskboard_admin;
