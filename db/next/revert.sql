COMMENT ON TABLE taskboard.queues IS
    'Queue settings (paused, max_running). Written only by the taskboard functions.';
DROP INDEX taskboard.queues_discarding;
ALTER TABLE taskboard.queues DROP COLUMN discard_succeeded;
