-- check_lengths(what, n, other, m) -> void
-- Internal: the check that two arrays pair up: `what` has n elements and
-- `other` m. Returns when n = m or either is NULL; raises 22023
-- '<what> has <n> elements but <other> has <m>' otherwise.
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_lengths(what text, n integer, other text, m integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_lengths.n <> check_lengths.m THEN
        RAISE EXCEPTION '% has % elements but % has %',
            check_lengths.what, check_lengths.n, check_lengths.other, check_lengths.m
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_lengths(text,integer,text,integer) FROM PUBLIC;
