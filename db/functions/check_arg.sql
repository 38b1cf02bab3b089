-- check_arg(ok, message) -> void
-- Internal: the check of an argument by a rule its caller states once, in
-- the call. Returns when `ok` is true; raises 22023 with `message` when it
-- is false or NULL. The rules shared by several functions have checks of
-- their own (check_name, check_key, check_given, check_between, ...).
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_arg(ok boolean, message text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_arg.ok IS NOT TRUE THEN
        RAISE EXCEPTION USING MESSAGE = check_arg.message, ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_arg(boolean,text) FROM PUBLIC;
