-- Deploy taskboard:job_info_more to pg
-- requires: jobs
-- requires: started_at
--
-- taskboard.job_info, what get_job and find_jobs return, gains the job's
-- payload and its fence (the number of its latest claim), after started_at.
-- Callers read job_info by name, so the new attributes change nothing for
-- them.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TYPE taskboard.job_info ADD ATTRIBUTE payload jsonb;
ALTER TYPE taskboard.job_info ADD ATTRIBUTE fence bigint;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
