-- Deploy taskboard:jobs_failed_index to pg
-- requires: jobs
--
-- Dead and cancelled jobs by state and queue. The jobs a person looks for after an
-- incident are few among the finished ones; with this index queue_overview
-- counts them and find_jobs lists them without reading the succeeded jobs.
-- A job enters it only when it dies or is cancelled: claims and successful
-- completions write no entry in it.
--
-- Building it reads the whole table and blocks writes to taskboard.jobs
-- while it runs (about a second per million rows).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE INDEX jobs_failed_by_queue
    ON taskboard.jobs (state, queue, id)
    WHERE state IN ('dead', 'cancelled');

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
