-- check_given(what, value, hint) -> void
-- Internal: the check of an argument that must be given. Returns when
-- `value` is not NULL; raises 22023 '<what> must not be NULL' otherwise,
-- followed by ' (<hint>)' when a hint is given.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_given(what text, value anyelement, hint text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_given.value IS NULL THEN
        RAISE EXCEPTION '% must not be NULL%', check_given.what, coalesce(' (' || check_given.hint || ')', '')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_given(text,anyelement,text) FROM PUBLIC;
