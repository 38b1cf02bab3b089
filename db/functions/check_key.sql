-- check_key(what, value, max_chars, null_means) -> void
-- Internal: the check of a text argument that may be left out (a key, a
-- filter). Returns when `value` is NULL, or 1 to max_chars characters long
-- (any length when max_chars is NULL). Raises 22023
-- '<what> must not be empty (<null_means>)' when value is empty,
-- '<what> must be at most <max_chars> characters, got <length>' when longer.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_key(what text, value text, max_chars integer, null_means text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_key.value = '' THEN
        RAISE EXCEPTION '% must not be empty (%)', check_key.what, check_key.null_means
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(check_key.value) > check_key.max_chars THEN
        RAISE EXCEPTION '% must be at most % characters, got %',
            check_key.what, check_key.max_chars, pg_catalog.char_length(check_key.value)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_key(text,text,integer,text) FROM PUBLIC;
