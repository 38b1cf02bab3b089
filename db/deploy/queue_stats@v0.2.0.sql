-- Deploy taskboard:queue_stats to pg
-- requires: jobs

BEGIN;

SET LOCAL ROLE taskboard_owner;

-- Counts per queue and state, for `taskboard status` and dashboards.
--   jobs:          how many jobs of this queue are in this state;
--   oldest_run_at: the earliest run_at among them;
--   runnable:      how many of them claim would take now (queued and due,
--                  or running with an expired lease and attempts left).
CREATE VIEW taskboard.queue_stats AS
SELECT j.queue,
       j.state,
       pg_catalog.count(*) AS jobs,
       pg_catalog.min(j.run_at) AS oldest_run_at,
       pg_catalog.count(*) FILTER (
           WHERE (j.state = 'queued' AND j.run_at <= pg_catalog.clock_timestamp())
              OR (j.state = 'running'
                  AND j.lease_expires_at <= pg_catalog.clock_timestamp()
                  AND j.attempt < j.max_attempts)
       ) AS runnable
  FROM taskboard.jobs AS j
 GROUP BY j.queue, j.state;

GRANT SELECT ON taskboard.queue_stats TO taskboard_producer, taskboard_worker, taskboard_admin;

COMMIT;
