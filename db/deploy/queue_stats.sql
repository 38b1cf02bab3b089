-- Deploy taskboard:queue_stats to pg
-- requires: queue_stats@v0.4.8
-- requires: rate_limit

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- Counts per queue and state, for `taskboard status` and dashboards.
--   jobs:          how many jobs of this queue are in this state;
--   oldest_run_at: the earliest run_at among them;
--   runnable:      how many of them claim would take now (queued and due,
--                  or running with an expired lease and attempts left),
--                  were the queue neither paused nor at its limit;
--   paused:        whether the queue is paused (taskboard.pause);
--   max_running:   its limit (taskboard.set_queue_limit); NULL: none;
--   max_running_per_key: its limit per concurrency key
--                  (taskboard.set_key_limit); NULL: none;
--   rate_starts, rate_per, rate_by_key: its rate limit
--                  (taskboard.set_rate_limit); NULL, NULL, false: none;
--   window_starts: the jobs started within the last rate_per, of the
--                  queue, or with rate_by_key of its busiest key (0 when
--                  none started); NULL without a rate limit. At
--                  rate_starts, claim starts none until the window moves.
-- A queue appears once it has jobs.
CREATE OR REPLACE VIEW taskboard.queue_stats AS
SELECT j.queue,
       j.state,
       pg_catalog.count(*) AS jobs,
       pg_catalog.min(j.run_at) AS oldest_run_at,
       pg_catalog.count(*) FILTER (
           WHERE (j.state = 'queued' AND j.run_at <= pg_catalog.clock_timestamp())
              OR (j.state = 'running'
                  AND j.lease_expires_at <= pg_catalog.clock_timestamp()
                  AND j.attempt < j.max_attempts)
       ) AS runnable,
       COALESCE(q.paused, false) AS paused,
       q.max_running,
       q.max_running_per_key,
       q.rate_starts,
       q.rate_per,
       COALESCE(q.rate_by_key, false) AS rate_by_key,
       CASE
           WHEN q.rate_starts IS NULL THEN NULL
           WHEN NOT q.rate_by_key THEN (
               SELECT pg_catalog.count(*)
                 FROM taskboard.queue_starts AS s
                WHERE s.queue = j.queue
                  AND s.started_at > pg_catalog.clock_timestamp() - q.rate_per)
           ELSE COALESCE((
               SELECT pg_catalog.max(k.starts)
                 FROM (SELECT pg_catalog.count(*) AS starts
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = j.queue
                          AND s.concurrency_key IS NOT NULL
                          AND s.started_at > pg_catalog.clock_timestamp() - q.rate_per
                        GROUP BY s.concurrency_key) AS k), 0)
       END AS window_starts
  FROM taskboard.jobs AS j
  LEFT JOIN taskboard.queues AS q ON q.queue = j.queue
 GROUP BY j.queue, j.state, q.paused, q.max_running, q.max_running_per_key,
          q.rate_starts, q.rate_per, q.rate_by_key;

GRANT SELECT ON taskboard.queue_stats TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
