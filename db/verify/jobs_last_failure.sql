-- Verify taskboard:jobs_last_failure on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
BEGIN
    IF pg_catalog.to_regclass('taskboard.jobs_unfinished_last_failure') IS NULL THEN
        RAISE EXCEPTION 'index taskboard.jobs_unfinished_last_failure is missing';
    END IF;
    IF pg_catalog.has_function_privilege('public', 'taskboard.last_failure_at(jsonb)', 'EXECUTE') THEN
        RAISE EXCEPTION 'taskboard.last_failure_at(jsonb) must not be executable by PUBLIC';
    END IF;
END
$verify$;

ROLLBACK;
