-- Deploy taskboard:remove_schedule to pg
-- requires: schedule_identity
-- requires: checks
--
-- The rows of schedules no app declares any more stayed forever; the admin
-- removes them (taskboard schedules --prune-missing).

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.remove_schedule(schedule text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM taskboard.check_name('schedule', remove_schedule.schedule);
    DELETE FROM taskboard.schedule_slots AS s
     WHERE s.schedule = remove_schedule.schedule;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.remove_schedule(text) IS
$comment$remove_schedule(schedule) -> boolean
Deletes the row of `schedule` in taskboard.schedule_slots (its latest
slot, job, task and queue) and returns true; false when it has none.
Its jobs are left as they are. A worker that still declares the schedule
enqueues its next due slot again, as for a new schedule.
Executable by the admin role only.
Raises 22023 when schedule is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.remove_schedule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.remove_schedule(text) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
