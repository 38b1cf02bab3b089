-- Deploy taskboard:checks to pg
-- requires: checks@v0.4.3
-- requires: schema
--
-- check_time joins the checks: a time inside the years 1 to 9999, the times
-- the functions store and print back. check_interval compares what a
-- duration gives, clock + value, with clock and with clock + most, instead
-- of the interval itself: interval comparison counts a month as 30 days and
-- a day as 24 hours, so '12000 mon -360000 days 11 hours' compared as no
-- more than 12 hours, yet added to a clock gives a deadline 5,242 days on.
--
-- The argument checks the functions share, written once: each raises 22023
-- (invalid_parameter_value) with a message naming the argument, the
-- messages the functions have always raised. Internal: only the owner's
-- SECURITY DEFINER functions call them, so they are plain functions: no
-- SECURITY DEFINER and no SET, which would cost every nested call a switch
-- of user and settings. They run with their caller's fixed search_path, and
-- every name in them is schema-qualified.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

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

COMMENT ON FUNCTION taskboard.check_name(text,text) IS
$comment$check_name(what, value) -> void
Internal: the check of a name (a queue, task, worker or schedule) that
`what` names. Returns when `value` is 1 to 200 characters long.
Raises 22023 '<what> must not be NULL or empty' when value is NULL or
empty, '<what> must be at most 200 characters, got <length>' when longer.
Called by the functions that take a name; never granted to an application
role.$comment$;

REVOKE ALL ON FUNCTION taskboard.check_name(text,text) FROM PUBLIC;

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

COMMENT ON FUNCTION taskboard.check_interval(text,interval,interval) IS
$comment$check_interval(what, value, most) -> void
Internal: the check of a duration (a lease, a retry delay) that `what`
names, by the deadline it gives: returns when clock + value is later than
clock and no later than clock + most, clock being clock_timestamp() (so a
month and a day count as the calendar makes them, not as 30 days and 24
hours).
Raises 22023 '<what> must be positive, got <value>' when value is NULL or
clock + value is not later than clock, '<what> must be at most <most>, got
<value>' when clock + value is later than clock + most ('infinity'
included), most written in its largest whole unit (12 hours), or as its
interval text when it is no whole number of seconds (00:00:00.5). A value
with a part (years, days or hours) beyond 2000 years is refused by its
sign, positive or at most, without being added to the clock. Never granted
to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.check_interval(text,interval,interval) FROM PUBLIC;

CREATE OR REPLACE FUNCTION taskboard.check_time(what text, value timestamptz)
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

COMMENT ON FUNCTION taskboard.check_time(text,timestamptz) IS
$comment$check_time(what, value) -> void
Internal: the check of a time that `what` names (a run_at, a slot).
Returns when `value` is inside the years 1 to 9999 (UTC): from
0001-01-01 00:00:00+00, before 10000-01-01 00:00:00+00.
Raises 22023 '<what> must be between 0001-01-01 and 9999-12-31, got
<value>' otherwise (NULL, 'infinity' and '-infinity' included). Called by
the functions that take a time; never granted to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.check_time(text,timestamptz) FROM PUBLIC;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
