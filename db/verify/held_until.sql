-- Verify taskboard:held_until on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT held_until FROM taskboard.jobs WHERE false;

DO $verify$
BEGIN
    IF pg_catalog.to_regclass('taskboard.jobs_held_by_queue') IS NULL THEN
        RAISE EXCEPTION 'index taskboard.jobs_held_by_queue is missing';
    END IF;
END
$verify$;

ROLLBACK;
