-- check_between(what, value, low, high) -> void
-- Internal: the check of a count. Returns when `value` is not NULL and
-- within low..high (at least low when high is NULL); raises 22023
-- '<what> must be between <low> and <high>, got <value>' or
-- '<what> must be at least <low>, got <value>' otherwise (NULL as NULL).
-- Called by the owner's functions; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_between(what text, value bigint, low bigint, high bigint DEFAULT NULL::bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_between.value IS NULL OR check_between.value < check_between.low
       OR check_between.value > check_between.high THEN
        RAISE EXCEPTION '% must be %, got %', check_between.what,
            CASE WHEN check_between.high IS NULL THEN 'at least ' || check_between.low
                 ELSE 'between ' || check_between.low || ' and ' || check_between.high END,
            coalesce(check_between.value::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_between(text,bigint,bigint,bigint) FROM PUBLIC;
