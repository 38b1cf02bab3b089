-- check_items(what, value) -> void
-- Internal: the check of an array's elements. Returns when no element of
-- `value` is NULL (a NULL array has none); raises 22023
-- '<what> must not contain NULL' otherwise.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_items(what text, value anyarray)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pg_catalog.array_position(check_items.value, NULL) IS NOT NULL THEN
        RAISE EXCEPTION '% must not contain NULL', check_items.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_items(text,anyarray) FROM PUBLIC;
