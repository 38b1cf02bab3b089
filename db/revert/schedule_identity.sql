-- Revert taskboard:schedule_identity from pg
--
-- Drops the task and queue of each schedule's row (they are read again
-- from the jobs on the next deploy, where the jobs are still there) and
-- puts back the released view.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP VIEW taskboard.schedules;

ALTER TABLE taskboard.schedule_slots
    DROP COLUMN task,
    DROP COLUMN queue;

CREATE VIEW taskboard.schedules AS
SELECT s.schedule,
       s.last_slot,
       s.last_job_id
  FROM taskboard.schedule_slots AS s;

GRANT SELECT ON taskboard.schedules TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
