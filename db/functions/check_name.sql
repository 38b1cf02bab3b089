-- check_name(what, value) -> void
-- Internal: the check of a name (a queue, task, worker or schedule) that
-- `what` names. Returns when `value` is 1 to 200 characters long.
-- Raises 22023 '<what> must not be NULL or empty' when value is NULL or
-- empty, '<what> must be at most 200 characters, got <length>' when longer.
-- Called by the functions that take a name; never granted to an application
-- role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_name(what text, value text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_name.value IS NULL OR check_name.value = '' THEN
        RAISE EXCEPTION '% must not be NULL or empty', check_name.what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(check_name.value) > 200 THEN
        RAISE EXCEPTION '% must be at most 200 characters, got %', check_name.what, pg_catalog.char_length(check_name.value)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_name(text,text) FROM PUBLIC;
