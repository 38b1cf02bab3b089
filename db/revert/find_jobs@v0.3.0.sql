-- Revert taskboard:find_jobs from pg

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP FUNCTION taskboard.find_jobs(text, text, text, bigint, integer);

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
