-- Revert taskboard:retry from pg

BEGIN;

DROP FUNCTION taskboard.retry(bigint);

COMMIT;
