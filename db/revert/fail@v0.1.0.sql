-- Revert taskboard:fail from pg

BEGIN;

DROP FUNCTION taskboard.fail(bigint, uuid, text, interval);

COMMIT;
