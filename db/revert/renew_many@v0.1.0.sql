-- Revert taskboard:renew_many from pg

BEGIN;

DROP FUNCTION taskboard.renew_many(bigint[], uuid[], interval);

COMMIT;
