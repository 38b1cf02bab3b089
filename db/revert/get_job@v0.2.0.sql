-- Revert taskboard:get_job from pg

BEGIN;

DROP FUNCTION taskboard.get_job(bigint);

COMMIT;
