-- Verify taskboard:queue_stats on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT queue, state, jobs, oldest_run_at, runnable, paused, max_running, max_running_per_key
  FROM taskboard.queue_stats
 WHERE false;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
BEGIN
    IF NOT pg_catalog.has_table_privilege(v_prefix || '_producer', 'taskboard.queue_stats', 'SELECT') THEN
        RAISE EXCEPTION '%_producer must be able to read taskboard.queue_stats', v_prefix;
    END IF;
END
$verify$;

ROLLBACK;
