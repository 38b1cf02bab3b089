-- Revert taskboard:release from pg

BEGIN;

DROP FUNCTION taskboard.release(bigint, uuid, interval);

COMMIT;
