-- Revert taskboard:concurrency_key from pg
--
-- The functions that read the columns are reverted before this; the keys
-- and the key limits go with them (revert_losses counts them).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP INDEX taskboard.jobs_holders_by_key;
ALTER TABLE taskboard.jobs DROP COLUMN concurrency_key;
ALTER TABLE taskboard.queues DROP COLUMN max_running_per_key;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
