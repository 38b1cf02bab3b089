-- Verify taskboard:dependencies on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT dependencies_left, on_dependency_failure, has_dependents FROM taskboard.jobs WHERE false;
SELECT job_id, depends_on FROM taskboard.job_dependencies WHERE false;

DO $verify$
BEGIN
    IF pg_catalog.to_regclass('taskboard.job_dependencies_by_dependency') IS NULL
       OR pg_catalog.to_regclass('taskboard.jobs_with_dependents') IS NULL
       OR pg_catalog.to_regclass('taskboard.jobs_waiting_by_queue') IS NULL THEN
        RAISE EXCEPTION 'an index of the dependencies is missing';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS c
                    WHERE c.conname = 'jobs_state_known'
                      AND c.conrelid = 'taskboard.jobs'::regclass
                      AND pg_catalog.pg_get_constraintdef(c.oid) LIKE '%waiting%') THEN
        RAISE EXCEPTION 'jobs_state_known must allow the state waiting';
    END IF;
END
$verify$;

ROLLBACK;
