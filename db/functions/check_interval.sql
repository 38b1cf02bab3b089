-- check_interval(what, value, most) -> void
-- Internal: the check of a duration (a lease, a retry delay) that `what`
-- names, by the deadline it gives: returns when clock + value is later than
-- clock and no later than clock + most, clock being clock_timestamp() (so a
-- month and a day count as the calendar makes them, not as 30 days and 24
-- hours).
-- Raises 22023 '<what> must be positive, got <value>' when value is NULL or
-- clock + value is not later than clock, '<what> must be at most <most>, got
-- <value>' when clock + value is later than clock + most ('infinity'
-- included), most written in its largest whole unit (12 hours), or as its
-- interval text when it is no whole number of seconds (00:00:00.5). A value
-- with a part (years, days or hours) beyond 2000 years is refused by its
-- sign, positive or at most, without being added to the clock. Never granted
-- to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_interval(what text, value interval, most interval)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far boolean;
    v_epoch numeric;
    v_seconds bigint;
    v_unit text;
    v_count bigint;
    v_most text;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry clock + value
    -- out of the timestamp range: such a value is judged by its sign alone,
    -- never added to the clock, and refused either way.
    v_far := check_interval.value IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM check_interval.value)) > 2000
                  OR pg_catalog.abs(EXTRACT(day FROM check_interval.value)) > 730000
                  OR pg_catalog.abs(EXTRACT(hour FROM check_interval.value)) > 17520000);
    IF check_interval.value IS NULL
       OR (v_far AND check_interval.value <= interval '0')
       OR (NOT v_far AND v_clock + check_interval.value <= v_clock) THEN
        RAISE EXCEPTION '% must be positive, got %', check_interval.what, check_interval.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock + check_interval.value > v_clock + check_interval.most THEN
        -- The bound in the largest whole unit (12 hours, not 12:00:00); a
        -- bound that is no whole number of seconds as its interval text.
        v_epoch := EXTRACT(epoch FROM check_interval.most);
        IF v_epoch <> pg_catalog.trunc(v_epoch) THEN
            v_most := check_interval.most::text;
        ELSE
            v_seconds := v_epoch::bigint;
            SELECT u.unit, v_seconds / u.seconds
              INTO v_unit, v_count
              FROM (VALUES (1, 'day', 86400), (2, 'hour', 3600), (3, 'minute', 60), (4, 'second', 1))
                   AS u(ord, unit, seconds)
             WHERE v_seconds % u.seconds = 0
             ORDER BY u.ord
             LIMIT 1;
            v_most := v_count || ' ' || v_unit || CASE WHEN v_count = 1 THEN '' ELSE 's' END;
        END IF;
        RAISE EXCEPTION '% must be at most %, got %', check_interval.what, v_most, check_interval.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_interval(text,interval,interval) FROM PUBLIC;
