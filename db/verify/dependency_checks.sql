-- Verify taskboard:dependency_checks on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT job_id, side, added_at FROM taskboard.dependency_checks WHERE false;

ROLLBACK;
