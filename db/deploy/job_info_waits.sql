-- Deploy taskboard:job_info_waits to pg
-- requires: jobs
-- requires: dependencies
-- requires: concurrency_key
--
-- taskboard.job_info, what get_job and find_jobs return, gains the job's
-- concurrency_key and waiting_for, the ids of the dependencies it still
-- waits for, after fence. Callers read job_info by name, so the new
-- attributes change nothing for them.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

ALTER TYPE taskboard.job_info ADD ATTRIBUTE concurrency_key text;
ALTER TYPE taskboard.job_info ADD ATTRIBUTE waiting_for bigint[];

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
