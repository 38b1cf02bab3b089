-- check_time(what, value) -> void
-- Internal: the check of a time that `what` names (a run_at, a slot).
-- Returns when `value` is inside the years 1 to 9999 (UTC): from
-- 0001-01-01 00:00:00+00, before 10000-01-01 00:00:00+00.
-- Raises 22023 '<what> must be between 0001-01-01 and 9999-12-31, got
-- <value>' otherwise (NULL, 'infinity' and '-infinity' included). Called by
-- the functions that take a time; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_time(what text, value timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF check_time.value IS NULL
       OR NOT (check_time.value >= timestamptz '0001-01-01 00:00:00+00'
               AND check_time.value < timestamptz '10000-01-01 00:00:00+00') THEN
        RAISE EXCEPTION '% must be between 0001-01-01 and 9999-12-31, got %', check_time.what, check_time.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_time(text,timestamp with time zone) FROM PUBLIC;
