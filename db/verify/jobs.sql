-- Verify taskboard:jobs on pg

BEGIN;

SELECT id, queue, task, payload, state, priority, run_at, attempt, max_attempts,
       dedupe_key, lease_token, lease_expires_at, claimed_by, idempotency_key,
       result, errors, created_at, finished_at
  FROM taskboard.jobs
 WHERE false;

SELECT (NULL::taskboard.claimed).idempotency_key,
       (NULL::taskboard.job_info).errors;

DO $verify$
BEGIN
    IF (SELECT relowner::pg_catalog.regrole::text
          FROM pg_catalog.pg_class
         WHERE oid = 'taskboard.jobs'::pg_catalog.regclass) <> 'taskboard_owner' THEN
        RAISE EXCEPTION 'taskboard.jobs must be owned by taskboard_owner';
    END IF;
    IF pg_catalog.has_table_privilege('taskboard_producer', 'taskboard.jobs', 'SELECT, INSERT, UPDATE, DELETE')
       OR pg_catalog.has_table_privilege('taskboard_worker', 'taskboard.jobs', 'SELECT, INSERT, UPDATE, DELETE')
       OR pg_catalog.has_table_privilege('taskboard_admin', 'taskboard.jobs', 'SELECT, INSERT, UPDATE, DELETE') THEN
        RAISE EXCEPTION 'no application role may read or write taskboard.jobs directly';
    END IF;
END
$verify$;

ROLLBACK;
