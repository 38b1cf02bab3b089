-- Verify taskboard:queue_stats on pg

BEGIN;

SELECT queue, state, jobs, oldest_run_at, runnable
  FROM taskboard.queue_stats
 WHERE false;

DO $verify$
BEGIN
    IF NOT pg_catalog.has_table_privilege('taskboard_producer', 'taskboard.queue_stats', 'SELECT') THEN
        RAISE EXCEPTION 'taskboard_producer must be able to read taskboard.queue_stats';
    END IF;
END
$verify$;

ROLLBACK;
