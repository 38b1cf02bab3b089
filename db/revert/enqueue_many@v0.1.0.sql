-- Revert taskboard:enqueue_many from pg

BEGIN;

DROP FUNCTION taskboard.enqueue_many(text, jsonb[], text, timestamptz, integer, integer, text[]);

COMMIT;
