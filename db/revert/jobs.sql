-- Revert taskboard:jobs from pg

BEGIN;

DROP TYPE taskboard.job_info;
DROP TYPE taskboard.claimed;
DROP TABLE taskboard.jobs;

COMMIT;
