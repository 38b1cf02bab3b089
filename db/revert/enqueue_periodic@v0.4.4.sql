-- Revert taskboard:enqueue_periodic to its v0.4.3 definition

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.enqueue_periodic(
    schedule     text,
    slot         timestamptz,
    task         text,
    payload      jsonb   DEFAULT '{}',
    queue        text    DEFAULT 'default',
    priority     integer DEFAULT 0,
    max_attempts integer DEFAULT 5
)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_id  bigint;
BEGIN
    PERFORM taskboard.check_name('schedule', enqueue_periodic.schedule);
    IF enqueue_periodic.slot IS NULL THEN
        RAISE EXCEPTION 'slot must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_catalog.isfinite(enqueue_periodic.slot) THEN
        RAISE EXCEPTION 'slot must be a finite time, got %', enqueue_periodic.slot
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_periodic.slot > v_now THEN
        RAISE EXCEPTION 'slot must not be later than the database clock (%), got %', v_now, enqueue_periodic.slot
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The same checks as enqueue's, made before the slot is looked at: bad
    -- input is refused whether or not the slot is still free.
    PERFORM taskboard.check_name('task', enqueue_periodic.task);
    PERFORM taskboard.check_name('queue', enqueue_periodic.queue);
    IF enqueue_periodic.payload IS NULL THEN
        RAISE EXCEPTION 'payload must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_periodic.priority IS NULL THEN
        RAISE EXCEPTION 'priority must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_periodic.max_attempts IS NULL OR enqueue_periodic.max_attempts < 1 THEN
        RAISE EXCEPTION 'max_attempts must be at least 1, got %', enqueue_periodic.max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- Take the slot: insert the schedule's row, or move its last_slot
    -- forward. A concurrent caller of the same schedule waits here for this
    -- transaction, then sees the slot taken (or, after a rollback, free).
    INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, updated_at)
    VALUES (enqueue_periodic.schedule, enqueue_periodic.slot, v_now)
    ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO UPDATE
       SET last_slot = excluded.last_slot,
           last_job_id = NULL,
           updated_at = excluded.updated_at
     WHERE s.last_slot < excluded.last_slot;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;

    v_id := taskboard.enqueue(
        task         => enqueue_periodic.task,
        payload      => enqueue_periodic.payload,
        queue        => enqueue_periodic.queue,
        run_at       => enqueue_periodic.slot,
        priority     => enqueue_periodic.priority,
        max_attempts => enqueue_periodic.max_attempts
    );

    UPDATE taskboard.schedule_slots AS s
       SET last_job_id = v_id
     WHERE s.schedule = enqueue_periodic.schedule;
    RETURN v_id;
END
$function$;

COMMENT ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer) IS
$comment$enqueue_periodic(schedule, slot, task, payload, queue, priority, max_attempts) -> bigint
Enqueues the job of one slot of a schedule (a time its cron fires, as the
caller computed it from the database clock) and returns its id: a queued
job of `task` whose run_at is `slot`, so get_job shows which slot it is.
Exactly once per slot, whatever the number of callers: the schedule's row
in taskboard.schedule_slots is compared and set (last_slot < slot) before
the job is inserted, and concurrent callers of one slot wait for that row,
then find the slot taken.
NULL: that slot, or a later one, was already enqueued; nothing changes.
So only the latest of the slots missed while no worker ran gets a job,
when a caller sends it first.
Sends NOTIFY taskboard, '<queue>' as enqueue does (the job is runnable
now). Joins the caller's transaction: a rollback frees the slot again.
In REPEATABLE READ or SERIALIZABLE a race may raise 40001.
Raises 22023 when schedule, task or queue is NULL, empty or longer than
200 characters, slot is NULL, not finite or later than the database
clock, or payload, priority or max_attempts is NULL, max_attempts < 1.$comment$;

REVOKE ALL ON FUNCTION taskboard.enqueue_periodic(text, timestamptz, text, jsonb, text, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_periodic(text, timestamptz, text, jsonb, text, integer, integer)
    TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
