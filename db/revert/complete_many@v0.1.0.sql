-- Revert taskboard:complete_many from pg

BEGIN;

DROP FUNCTION taskboard.complete_many(bigint[], uuid[], jsonb[]);

COMMIT;
