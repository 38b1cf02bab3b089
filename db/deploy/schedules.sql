-- Deploy taskboard:schedules to pg
-- requires: jobs
--
-- Periodic jobs: a row per schedule that has had a job, holding its latest
-- enqueued slot. Written only by enqueue_periodic, which makes each slot of
-- a schedule exactly one job by comparing and setting last_slot on this
-- row; read through the view taskboard.schedules. A schedule's cron lives
-- in the driver that declares it, not here.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE TABLE taskboard.schedule_slots (
    schedule    text        PRIMARY KEY,
    -- The latest slot enqueued; only ever moves forward.
    last_slot   timestamptz NOT NULL,
    -- Its job, set in the same transaction as last_slot. Not a foreign key:
    -- prune deletes finished jobs, and the slot must stay taken.
    last_job_id bigint,
    -- The database clock when last_slot was enqueued.
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),

    CONSTRAINT schedule_slots_schedule_named
        CHECK (schedule <> '' AND pg_catalog.char_length(schedule) <= 200),
    CONSTRAINT schedule_slots_last_slot_finite CHECK (pg_catalog.isfinite(last_slot))
);

COMMENT ON TABLE taskboard.schedule_slots IS
    'The latest enqueued slot of each schedule. Written only by taskboard.enqueue_periodic.';

-- One row per schedule that has had a job:
--   schedule:    its name, as the driver declares it;
--   last_slot:   the latest slot enqueued (enqueue_periodic refuses this
--                slot and earlier ones from then on);
--   last_job_id: that slot's job (it may have been pruned since).
CREATE VIEW taskboard.schedules AS
SELECT s.schedule,
       s.last_slot,
       s.last_job_id
  FROM taskboard.schedule_slots AS s;

GRANT SELECT ON taskboard.schedules TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
