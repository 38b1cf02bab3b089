-- check_recent(recent) -> void
-- Internal: the check of the window a report of recent activity covers.
-- Returns when `recent` is positive and at most 31 days, by the time it
-- gives: clock - 31 days <= clock - recent < clock, months and days counted
-- as the calendar makes them. Raises 22023 'recent must be positive and at
-- most 31 days, got <recent>' (NULL as NULL) otherwise; a part (months,
-- days, time) beyond 2000 years is refused without being added to the clock.
-- Called by queue_overview and job_activity; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.check_recent(recent interval)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_clock timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF check_recent.recent IS NULL
       OR pg_catalog.abs(EXTRACT(year FROM check_recent.recent)) > 2000
       OR pg_catalog.abs(EXTRACT(day FROM check_recent.recent)) > 730000
       OR pg_catalog.abs(EXTRACT(hour FROM check_recent.recent)) > 17520000
       OR v_clock - check_recent.recent >= v_clock
       OR v_clock - check_recent.recent < v_clock - interval '31 days' THEN
        RAISE EXCEPTION 'recent must be positive and at most 31 days, got %',
            coalesce(check_recent.recent::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.check_recent(interval) FROM PUBLIC;
