-- Verify taskboard:started_at on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT started_at FROM taskboard.jobs WHERE false;
SELECT (NULL::taskboard.job_info).started_at;

ROLLBACK;
