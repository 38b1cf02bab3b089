-- remove_schedule(schedule) -> boolean
-- Deletes the row of `schedule` in taskboard.schedule_slots (its latest
-- slot, job, task and queue) and returns true; false when it has none.
-- Its jobs are left as they are. A worker that still declares the schedule
-- enqueues its next due slot again, as for a new schedule.
-- Executable by the admin role only.
-- Raises 22023 when schedule is NULL, empty or longer than 200 characters.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.remove_schedule(schedule text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('schedule', remove_schedule.schedule);
    DELETE FROM taskboard.schedule_slots AS s
     WHERE s.schedule = remove_schedule.schedule;
    RETURN FOUND;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.remove_schedule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.remove_schedule(text) TO taskboard_admin;
