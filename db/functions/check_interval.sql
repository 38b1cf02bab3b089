-- check_interval(what, value, most) -> void
-- Internal: the check of a duration (a lease, a retry delay) that `what`
-- names. Returns when `value` is positive and at most `most`.
-- Raises 22023 '<what> must be positive, got <value>' when value is NULL,
-- zero or negative, '<what> must be at most <most>, got <value>' when longer
-- than most ('infinity' included), most written in its largest whole unit
-- (12 hours), or as its interval text when it is no whole number of seconds
-- (00:00:00.5). Never granted to an application role.

-- Written by `make schema` from a fresh deploy (never by hand): the definition
-- is that of db/deploy/, the header above is the function's COMMENT ON FUNCTION.
CREATE OR REPLACE FUNCTION taskboard.check_interval(what text, value interval, most interval)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_epoch numeric;
    v_seconds bigint;
    v_unit text;
    v_count bigint;
    v_most text;
BEGIN
    IF check_interval.value IS NULL OR check_interval.value <= interval '0' THEN
        RAISE EXCEPTION '% must be positive, got %', check_interval.what, check_interval.value
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF check_interval.value > check_interval.most THEN
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
