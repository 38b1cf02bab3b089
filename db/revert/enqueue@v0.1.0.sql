-- Revert taskboard:enqueue from pg

BEGIN;

DROP FUNCTION taskboard.enqueue(text, jsonb, text, timestamptz, integer, integer, text);

COMMIT;
