-- last_failure_at(errors) -> timestamptz
-- The latest `at` among the entries of a job's errors; NULL when there is
-- none. Immutable for the index: each `at` is written by the functions as
-- JSON's ISO 8601 text of a timestamptz, which always carries its UTC
-- offset, so reading it back depends on no setting.
-- Raises 22007 (invalid_datetime_format) on an `at` that is not such a text.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.last_failure_at(errors jsonb)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT pg_catalog.max((e.entry ->> 'at')::timestamptz)
      FROM pg_catalog.jsonb_array_elements(last_failure_at.errors) AS e(entry)
$function$;

REVOKE ALL ON FUNCTION taskboard.last_failure_at(jsonb) FROM PUBLIC;
