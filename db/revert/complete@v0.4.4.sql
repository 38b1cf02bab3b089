-- Revert taskboard:complete from pg

BEGIN;

DROP FUNCTION taskboard.complete(bigint, uuid, jsonb);

COMMIT;
