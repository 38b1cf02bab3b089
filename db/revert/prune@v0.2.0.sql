-- Revert taskboard:prune from pg

BEGIN;

DROP FUNCTION taskboard.prune(interval, integer);

COMMIT;
