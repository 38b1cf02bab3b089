-- Deploy taskboard:schedule_identity to pg
-- requires: schedules
-- requires: jobs
--
-- A schedule's row keeps the task and queue of its latest slot, so that a
-- slot taken for another task or queue is told apart from the schedule's
-- own job (enqueue_periodic raises, taskboard schedules shows a conflict).
-- Rows from before this change take them from their latest job when it is
-- still there; a row whose job was pruned keeps NULL (not known), and the
-- next slot enqueued under its name sets them.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TABLE taskboard.schedule_slots
    -- The task and queue of last_slot's job; NULL only on a row written
    -- before this column existed whose job was pruned since.
    ADD COLUMN task  text,
    ADD COLUMN queue text;

UPDATE taskboard.schedule_slots AS s
   SET task = j.task,
       queue = j.queue
  FROM taskboard.jobs AS j
 WHERE j.id = s.last_job_id;

-- One row per schedule that has had a job:
--   schedule:    its name, as the driver declares it;
--   last_slot:   the latest slot enqueued (enqueue_periodic refuses this
--                slot and earlier ones from then on);
--   last_job_id: that slot's job (it may have been pruned since);
--   task, queue: that slot's task and queue (NULL: not known, a row from
--                before 0.4.5 whose job was pruned).
CREATE OR REPLACE VIEW taskboard.schedules AS
SELECT s.schedule,
       s.last_slot,
       s.last_job_id,
       s.task,
       s.queue
  FROM taskboard.schedule_slots AS s;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
