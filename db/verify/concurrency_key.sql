-- Verify taskboard:concurrency_key on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT concurrency_key FROM taskboard.jobs WHERE false;
SELECT max_running_per_key FROM taskboard.queues WHERE false;

DO $verify$
BEGIN
    IF pg_catalog.to_regclass('taskboard.jobs_holders_by_key') IS NULL THEN
        RAISE EXCEPTION 'index taskboard.jobs_holders_by_key is missing';
    END IF;
END
$verify$;

ROLLBACK;
