-- Deploy taskboard:jobs_last_failure to pg
-- requires: jobs
--
-- The unfinished jobs that have failed before, by the time of their last
-- failed attempt: job_activity reads through it only those that failed
-- within its window, not every retried job however old its errors.
-- A job enters it only while it is queued or running with errors: claims of
-- jobs that never failed, and every finished job, write no entry in it.
--
-- Building it reads the whole table and blocks writes to taskboard.jobs
-- while it runs (about a second per million rows).

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- last_failure_at(errors) -> timestamptz
-- The latest `at` among the entries of a job's errors; NULL when there is
-- none. Immutable for the index: each `at` is written by the functions as
-- JSON's ISO 8601 text of a timestamptz, which always carries its UTC
-- offset, so reading it back depends on no setting.
-- Raises 22007 (invalid_datetime_format) on an `at` that is not such a text.

CREATE FUNCTION taskboard.last_failure_at(errors jsonb)
RETURNS timestamptz
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT pg_catalog.max((e.entry ->> 'at')::timestamptz)
      FROM pg_catalog.jsonb_array_elements(last_failure_at.errors) AS e(entry)
$function$;

REVOKE ALL ON FUNCTION taskboard.last_failure_at(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION taskboard.last_failure_at(jsonb) IS
$comment$last_failure_at(errors) -> timestamptz
The latest `at` among the entries of a job's errors; NULL when there is
none. Immutable for the index: each `at` is written by the functions as
JSON's ISO 8601 text of a timestamptz, which always carries its UTC
offset, so reading it back depends on no setting.
Raises 22007 (invalid_datetime_format) on an `at` that is not such a text.$comment$;

CREATE INDEX jobs_unfinished_last_failure
    ON taskboard.jobs (taskboard.last_failure_at(errors))
    WHERE state IN ('queued', 'running') AND errors <> '[]'::jsonb;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
