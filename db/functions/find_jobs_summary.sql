-- find_jobs_summary(queue, state, task, after_id, max_rows) -> setof taskboard.job_summary
-- The jobs find_jobs would return for the same arguments (every filter
-- given, NULL: any; newest first by id; keyset paging by after_id; at most
-- max_rows), each as a list shows it: job_id, queue, task, state, attempt,
-- max_attempts, priority, run_at, created_at, started_at, finished_at,
-- failures (how many entries its errors has) and last_error (the `error`
-- of the last entry, its first 200 characters; NULL when none). Never the
-- payload, the result, the errors themselves or a token: get_job gives
-- the whole job. For every role, as find_jobs.
-- Raises 22023 as find_jobs does: when queue or task is empty, state is not
-- one of waiting, queued, running, succeeded, dead or cancelled, or max_rows is
-- NULL or outside 1..1000.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.find_jobs_summary(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50)
 RETURNS SETOF taskboard.job_summary
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
BEGIN
    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.started_at, j.finished_at,
           pg_catalog.jsonb_array_length(j.errors),
           pg_catalog.left(j.errors -> -1 ->> 'error', 200)
      FROM taskboard.jobs AS j
     WHERE j.id = ANY (taskboard.find_ids(find_jobs_summary.queue, find_jobs_summary.state, find_jobs_summary.task,
                                          find_jobs_summary.after_id, find_jobs_summary.max_rows))
     ORDER BY j.id DESC;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO taskboard_admin;
