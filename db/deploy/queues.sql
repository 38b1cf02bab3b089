-- Deploy taskboard:queues to pg
-- requires: jobs
--
-- Queue control: a row per queue that has a setting. A queue without a row
-- is unpaused and unlimited; queues need no declaration. Written only by
-- pause, resume and set_queue_limit; read by claim and queue_stats.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE TABLE taskboard.queues (
    queue       text        PRIMARY KEY,
    -- claim hands out nothing while true; running jobs carry on.
    paused      boolean     NOT NULL DEFAULT false,
    -- claim never lets more jobs of the queue run at once; NULL: no limit.
    max_running integer,
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),

    CONSTRAINT queues_queue_named CHECK (queue <> '' AND pg_catalog.char_length(queue) <= 200),
    CONSTRAINT queues_max_running_positive CHECK (max_running IS NULL OR max_running >= 1)
);

COMMENT ON TABLE taskboard.queues IS
    'Queue settings (paused, max_running). Written only by the taskboard functions.';

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
