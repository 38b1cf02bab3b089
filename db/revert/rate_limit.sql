-- Revert taskboard:rate_limit from pg
--
-- The functions that read the columns are reverted before this; the rate
-- limits and the log of starts go with them (revert_losses counts them).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP TABLE taskboard.queue_starts;
ALTER TABLE taskboard.queues
    DROP COLUMN rate_starts,
    DROP COLUMN rate_per,
    DROP COLUMN rate_by_key;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
