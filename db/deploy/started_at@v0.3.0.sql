-- Deploy taskboard:started_at to pg
-- requires: jobs
--
-- jobs.started_at: when the job's last claim started it (NULL until a
-- claim), shown by get_job and find_jobs through taskboard.job_info, which
-- gains it last. claim sets it; nothing else changes it.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- No default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE taskboard.jobs ADD COLUMN started_at timestamptz;

ALTER TYPE taskboard.job_info ADD ATTRIBUTE started_at timestamptz;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
