-- Deploy taskboard:queue_stats to pg
-- requires: queue_stats@v0.4.7
-- requires: concurrency_key

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
--                  (taskboard.set_key_limit); NULL: none.
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
       q.max_running_per_key
  FROM taskboard.jobs AS j
  LEFT JOIN taskboard.queues AS q ON q.queue = j.queue
 GROUP BY j.queue, j.state, q.paused, q.max_running, q.max_running_per_key;

GRANT SELECT ON taskboard.queue_stats TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
