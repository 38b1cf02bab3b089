-- Revert taskboard:queue_stats from pg

BEGIN;

DROP VIEW taskboard.queue_stats;

COMMIT;
