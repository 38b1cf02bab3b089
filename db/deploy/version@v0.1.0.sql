-- Deploy taskboard:version to pg
-- requires: schema
--
-- The same text as functions/version.sql, where the current definition reads.

BEGIN;

SET LOCAL ROLE taskboard_owner;

-- version() -> text
-- The schema's release, for the driver's start-up check.
-- Raises nothing.

CREATE OR REPLACE FUNCTION taskboard.version()
RETURNS text
LANGUAGE sql
IMMUTABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT '0.1.0'::text
$function$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.version()
    TO taskboard_producer, taskboard_worker, taskboard_admin;

COMMIT;
