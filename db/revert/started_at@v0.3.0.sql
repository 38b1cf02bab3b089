-- Revert taskboard:started_at from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TYPE taskboard.job_info DROP ATTRIBUTE started_at;
ALTER TABLE taskboard.jobs DROP COLUMN started_at;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
