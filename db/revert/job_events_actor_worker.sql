-- Revert taskboard:job_events_actor_worker from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

COMMENT ON COLUMN taskboard.job_events.actor IS NULL;
ALTER TABLE taskboard.job_events DROP COLUMN actor_worker;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
