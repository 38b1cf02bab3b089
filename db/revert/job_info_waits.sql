-- Revert taskboard:job_info_waits from pg

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TYPE taskboard.job_info DROP ATTRIBUTE waiting_for;
ALTER TYPE taskboard.job_info DROP ATTRIBUTE concurrency_key;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
