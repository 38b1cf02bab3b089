-- version() -> text
-- The schema's release, for the driver's start-up check.
-- Raises nothing.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.7.3'::text
$function$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.version() TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.version() TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.version() TO taskboard_admin;
