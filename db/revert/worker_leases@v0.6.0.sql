-- Revert taskboard:worker_leases from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP FUNCTION taskboard.worker_leases(integer);

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
