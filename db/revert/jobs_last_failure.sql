-- Revert taskboard:jobs_last_failure from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP INDEX taskboard.jobs_unfinished_last_failure;
DROP FUNCTION taskboard.last_failure_at(jsonb);

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
