-- Revert taskboard:claim from pg

BEGIN;

DROP FUNCTION taskboard.claim(text, text, integer, interval);

COMMIT;
