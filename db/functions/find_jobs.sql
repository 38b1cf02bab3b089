-- find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
-- Jobs for people and dashboards: those matching every filter given (NULL:
-- any), newest first by id, at most max_rows of them. Keyset paging: pass
-- the last job_id of a page as after_id to get the jobs older than it.
-- Each row is as get_job shows it: concurrency_key, and for a waiting job
-- waiting_for, the ids of the dependencies it still waits for.
-- Never a token. For every role: get_job already shows any job to each of
-- them, and ids are consecutive.
-- Raises 22023 when queue or task is empty, state is not one of waiting,
-- queued, running, succeeded, dead or cancelled, or max_rows is NULL or outside
-- 1..1000.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.find_jobs(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50)
 RETURNS SETOF taskboard.job_info
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
BEGIN
    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      FROM taskboard.jobs AS j
     WHERE j.id = ANY (taskboard.find_ids(find_jobs.queue, find_jobs.state, find_jobs.task, find_jobs.after_id, find_jobs.max_rows))
     ORDER BY j.id DESC;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO taskboard_admin;
