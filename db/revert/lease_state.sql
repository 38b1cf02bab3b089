-- Revert taskboard:lease_state from pg

BEGIN;

DROP FUNCTION taskboard.lease_state(bigint, uuid);

COMMIT;
