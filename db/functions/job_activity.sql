-- job_activity(recent) -> table of (minute_start, queue, succeeded, failed, dead, cancelled)
-- What happened within `recent`, per minute and queue, for charts:
--   succeeded, dead, cancelled  jobs that finished so in that minute;
--   failed                      attempts that failed in that minute (each
--                               entry of a job's errors: a handler's failure,
--                               retried or not, or a last attempt's lease
--                               that expired).
-- Only minutes with something in them are returned, oldest first. It reads
-- the jobs finished within `recent` and the unfinished jobs whose last
-- failed attempt is within it, never the older ones.
-- Raises 22023 when recent is NULL, not positive or longer than 31 days,
-- by the time it gives: unless clock - 31 days <= clock - recent < clock,
-- months and days counted as the calendar makes them.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.job_activity(recent interval DEFAULT '01:00:00'::interval)
 RETURNS TABLE(minute_start timestamp with time zone, queue text, succeeded bigint, failed bigint, dead bigint, cancelled bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_since timestamptz;
BEGIN
    v_checked := taskboard.check_recent(job_activity.recent);
    v_since := pg_catalog.clock_timestamp() - job_activity.recent;

    RETURN QUERY
    WITH recent_jobs AS (
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
        UNION ALL
        -- A job that failed and waits for its next attempt, or runs it; or
        -- one an admin retried (its attempts reset, its errors kept): only
        -- those whose last failure is within `recent` (the index
        -- jobs_unfinished_last_failure), since no earlier entry can be.
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.state IN ('queued', 'running')
           AND j.errors <> '[]'::jsonb
           AND taskboard.last_failure_at(j.errors) >= v_since
    ), events AS (
        SELECT r.queue, r.state AS what, r.finished_at AS at
          FROM recent_jobs AS r
         WHERE r.finished_at IS NOT NULL
        UNION ALL
        SELECT r.queue, 'failed', (e.entry ->> 'at')::timestamptz
          FROM recent_jobs AS r
         CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(r.errors) AS e(entry)
         WHERE (e.entry ->> 'at')::timestamptz >= v_since
    )
    SELECT pg_catalog.date_trunc('minute', ev.at),
           ev.queue,
           pg_catalog.count(*) FILTER (WHERE ev.what = 'succeeded'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'failed'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'dead'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'cancelled')
      FROM events AS ev
     GROUP BY 1, 2
     ORDER BY 1, 2;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.job_activity(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO taskboard_admin;
