-- Revert taskboard:held_until from pg
--
-- The functions that read the column are reverted before this; a cancelled
-- job keeps its lease_expires_at, which the released retry waits for.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP INDEX taskboard.jobs_held_by_queue;
ALTER TABLE taskboard.jobs DROP COLUMN held_until;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
