-- Deploy taskboard:claimed_waited to pg
-- requires: trace_context
--
-- taskboard.claimed gains, after trace_context, `waited interval`: how long
-- the job had been runnable when the claim took it, on the database's
-- clock (the claim's time minus the job's run_at, or, for a reclaimed
-- expired lease, minus that lease's deadline). The driver adds the time
-- from the claim's answer to the handler's start and observes the sum as
-- its start-lag metric. claim fills it; nothing is stored.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TYPE taskboard.claimed ADD ATTRIBUTE waited interval;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
