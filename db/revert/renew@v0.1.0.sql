-- Revert taskboard:renew from pg

BEGIN;

DROP FUNCTION taskboard.renew(bigint, uuid, interval);

COMMIT;
