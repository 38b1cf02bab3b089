-- Verify taskboard:job_info_waits on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT (NULL::taskboard.job_info).concurrency_key, (NULL::taskboard.job_info).waiting_for;

ROLLBACK;
