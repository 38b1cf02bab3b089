-- Revert taskboard:schema from pg

BEGIN;

DROP SCHEMA taskboard;

COMMIT;
