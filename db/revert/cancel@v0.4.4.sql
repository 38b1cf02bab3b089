-- Revert taskboard:cancel from pg

BEGIN;

DROP FUNCTION taskboard.cancel(bigint);

COMMIT;
