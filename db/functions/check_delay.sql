-- check_delay(what, value, most, back) -> void
-- Internal: the check of a span of time that may be zero: a delay from now
-- (back false) or an age before now (back true). Returns when `value` is
-- not NULL and clock <= clock + value <= clock + most (clock - value for an
-- age), months and days counted as the calendar makes them; `most` is the
-- bound as its message names it ('12 hours'). Raises 22023
-- '<what> must not be NULL or negative, got <value>' or
-- '<what> must be at most <most>, got <value>' otherwise. A part (months,
-- days, time) beyond 2000 years could carry the clock out of the timestamp
-- range: such a value is judged by its sign alone, and is never within most.
-- Called by release and prune; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_delay(what text, value interval, most text, back boolean DEFAULT false)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far   boolean;
    v_end   timestamptz;
BEGIN
    v_far := check_delay.value IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM check_delay.value)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM check_delay.value)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM check_delay.value)) > 17520000);
    IF NOT v_far THEN
        v_end := CASE WHEN check_delay.back THEN v_clock - check_delay.value ELSE v_clock + check_delay.value END;
    END IF;
    IF check_delay.value IS NULL
       OR (v_far AND check_delay.value < interval '0')
       OR (NOT v_far AND (CASE WHEN check_delay.back THEN v_end > v_clock ELSE v_end < v_clock END)) THEN
        RAISE EXCEPTION '% must not be NULL or negative, got %', check_delay.what, check_delay.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR (CASE WHEN check_delay.back THEN v_end < v_clock - check_delay.most::interval
                      ELSE v_end > v_clock + check_delay.most::interval END) THEN
        RAISE EXCEPTION '% must be at most %, got %', check_delay.what, check_delay.most, check_delay.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_delay(text,interval,text,boolean) FROM PUBLIC;
