-- Revert taskboard:version from pg

BEGIN;

DROP FUNCTION taskboard.version();

COMMIT;
