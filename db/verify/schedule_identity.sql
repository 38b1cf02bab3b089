-- Verify taskboard:schedule_identity on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT schedule, last_slot, last_job_id, task, queue
  FROM taskboard.schedules
 WHERE false;

ROLLBACK;
