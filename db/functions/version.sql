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
SELECT '0.4.2'::text
$function$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.version()
    TO :"producer_role", :"worker_role", :"admin_role";
