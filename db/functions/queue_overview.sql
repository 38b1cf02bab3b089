-- queue_overview(recent) -> table of one row per queue
-- Each queue as it stands, for people and dashboards, read without counting
-- the finished jobs beyond `recent`: a table of millions of succeeded jobs
-- costs it nothing. Per queue:
--   queued, running      jobs in those states now (queued includes those
--                        whose run_at is still ahead);
--   runnable             what claim could hand out now if the queue were not
--                        paused or at its limit: queued jobs that are due,
--                        and running jobs whose lease expired with attempts
--                        left;
--   oldest_runnable_at   since when the longest-waiting of those has been
--                        runnable (its run_at, or its lease's expiry);
--   dead, cancelled      all such jobs still kept (prune removes them);
--   succeeded_recent, dead_recent, cancelled_recent
--                        jobs that finished so within `recent`;
--   paused, max_running  the queue's settings (false and NULL by default);
--   max_running_per_key, rate_starts, rate_per, rate_by_key
--                        its limit per concurrency key and its rate limit
--                        (NULL, NULL, NULL and false by default);
--   window_starts        the jobs started within the last rate_per, of the
--                        queue, or with rate_by_key of its busiest key;
--                        NULL without a rate limit;
--   waiting              jobs waiting for dependencies (see
--                        taskboard.enqueue's depends_on).
-- A queue is listed when it has unfinished, dead or cancelled jobs, jobs
-- finished within `recent`, or settings. Ordered by queue.
-- Raises 22023 when recent is NULL, not positive or longer than 31 days,
-- by the time it gives: unless clock - 31 days <= clock - recent < clock,
-- months and days counted as the calendar makes them.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.queue_overview(recent interval DEFAULT '01:00:00'::interval)
 RETURNS TABLE(queue text, queued bigint, running bigint, runnable bigint, oldest_runnable_at timestamp with time zone, dead bigint, cancelled bigint, succeeded_recent bigint, dead_recent bigint, cancelled_recent bigint, paused boolean, max_running integer, max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, window_starts bigint, waiting bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- Read once: every count below is against the same instant.
    v_now   timestamptz := pg_catalog.clock_timestamp();
    v_since timestamptz;
BEGIN
    v_checked := taskboard.check_recent(queue_overview.recent);
    v_since := v_now - queue_overview.recent;

    RETURN QUERY
    WITH pending AS (
        -- Each branch reads its state's partial index, never finished jobs.
        SELECT j.queue,
               pg_catalog.count(*) AS queued,
               0::bigint AS running,
               pg_catalog.count(*) FILTER (WHERE j.run_at <= v_now) AS runnable,
               pg_catalog.min(j.run_at) FILTER (WHERE j.run_at <= v_now) AS oldest
          FROM taskboard.jobs AS j
         WHERE j.state = 'queued'
         GROUP BY j.queue
        UNION ALL
        SELECT j.queue,
               0::bigint,
               pg_catalog.count(*),
               pg_catalog.count(*) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts),
               pg_catalog.min(j.lease_expires_at) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts)
          FROM taskboard.jobs AS j
         WHERE j.state = 'running'
         GROUP BY j.queue
    ), unfinished AS (
        SELECT w.queue,
               pg_catalog.sum(w.queued)::bigint AS queued,
               pg_catalog.sum(w.running)::bigint AS running,
               pg_catalog.sum(w.runnable)::bigint AS runnable,
               pg_catalog.min(w.oldest) AS oldest
          FROM pending AS w
         GROUP BY w.queue
    ), failed AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.state IN ('dead', 'cancelled')
         GROUP BY j.queue
    ), finished AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'succeeded') AS succeeded,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
         GROUP BY j.queue
    ), dependents AS (
        -- The jobs waiting for dependencies, through their own index.
        SELECT j.queue, pg_catalog.count(*) AS waiting
          FROM taskboard.jobs AS j
         WHERE j.state = 'waiting'
         GROUP BY j.queue
    ), names AS (
        SELECT u.queue FROM unfinished AS u
        UNION SELECT f.queue FROM failed AS f
        UNION SELECT f.queue FROM finished AS f
        UNION SELECT q.queue FROM taskboard.queues AS q
        UNION SELECT d.queue FROM dependents AS d
    ), windows AS (
        -- The starts within each rate limit's window: of the queue, or of
        -- its busiest key (the log holds starts of limited queues only).
        SELECT k.queue, pg_catalog.max(k.starts) AS starts
          FROM (SELECT s.queue, pg_catalog.count(*) AS starts
                  FROM taskboard.queues AS q
                  JOIN taskboard.queue_starts AS s
                    ON s.queue = q.queue
                   AND s.started_at > v_now - q.rate_per
                   AND (NOT q.rate_by_key OR s.concurrency_key IS NOT NULL)
                 WHERE q.rate_starts IS NOT NULL
                 GROUP BY s.queue, CASE WHEN q.rate_by_key THEN s.concurrency_key END) AS k
         GROUP BY k.queue
    )
    SELECT n.queue,
           coalesce(u.queued, 0),
           coalesce(u.running, 0),
           coalesce(u.runnable, 0),
           u.oldest,
           coalesce(fa.dead, 0),
           coalesce(fa.cancelled, 0),
           coalesce(fi.succeeded, 0),
           coalesce(fi.dead, 0),
           coalesce(fi.cancelled, 0),
           coalesce(q.paused, false),
           q.max_running,
           q.max_running_per_key,
           q.rate_starts,
           q.rate_per,
           coalesce(q.rate_by_key, false),
           CASE WHEN q.rate_starts IS NOT NULL THEN coalesce(w.starts, 0) END,
           coalesce(d.waiting, 0)
      FROM names AS n
      LEFT JOIN unfinished AS u ON u.queue = n.queue
      LEFT JOIN failed AS fa ON fa.queue = n.queue
      LEFT JOIN finished AS fi ON fi.queue = n.queue
      LEFT JOIN taskboard.queues AS q ON q.queue = n.queue
      LEFT JOIN windows AS w ON w.queue = n.queue
      LEFT JOIN dependents AS d ON d.queue = n.queue
     ORDER BY n.queue;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.queue_overview(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO taskboard_admin;
