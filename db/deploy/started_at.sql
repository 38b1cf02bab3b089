-- Deploy taskboard:started_at to pg
-- requires: started_at@v0.3.0
-- requires: job_info_more
--
-- Nothing in the schema changes: jobs.started_at and job_info.started_at are
-- as started_at@v0.3.0 made them. Its verify asked that started_at be the
-- last attribute of taskboard.job_info; payload and fence follow it now, and
-- this change's verify asks for started_at wherever it is.

BEGIN;

COMMIT;
