-- Revert taskboard:notify_runnable from pg

BEGIN;

DROP FUNCTION taskboard.notify_runnable(text);

COMMIT;
