-- Verify taskboard:job_events_actor_worker on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

SELECT actor_worker FROM taskboard.job_events WHERE false;

ROLLBACK;
