-- enqueue_periodic(schedule, slot, task, payload, queue, priority, max_attempts, previous_names) -> bigint
-- Enqueues the job of one slot of a schedule (a time its cron fires, as the
-- caller computed it from the database clock) and returns its id: a queued
-- job of `task` on `queue` whose run_at is `slot`, so get_job shows which
-- slot it is. Exactly once per slot, whatever the number of callers: the
-- schedule's row in taskboard.schedule_slots is locked and compared
-- (last_slot < slot) before the job is inserted, and concurrent callers of
-- one slot wait for that row, then find the slot taken.
-- The row keeps the task and queue of its latest slot: they are part of the
-- slot's identity.
-- NULL: that slot, or a later one, was already enqueued for this task on
-- this queue; nothing changes. So only the latest of the slots missed while
-- no worker ran gets a job, when a caller sends it first.
-- previous_names: the names this schedule had before a rename. The first
-- call under the new name starts from the latest slot those rows hold, and
-- each slot taken is marked taken under them too, so no slot runs twice
-- across the rename; remove_schedule deletes the old rows once no worker
-- declares them.
-- Sends NOTIFY taskboard, '<queue>' as enqueue does (the job is runnable
-- now). Joins the caller's transaction: a rollback frees the slot again.
-- In REPEATABLE READ or SERIALIZABLE a race may raise 40001.
-- Executable by the worker and admin roles, not by producers.
-- Raises 23505 when that slot, or a later one, was taken for another task
-- or queue (two declarations share the name); nothing changes.
-- Raises 22023 when schedule, task or queue is NULL, empty or longer than
-- 200 characters, slot is NULL, not finite, outside the years 1 to 9999
-- (before 0001-01-01 or from 10000-01-01 on, UTC) or later than the database
-- clock, payload, priority or max_attempts is NULL, max_attempts < 1, or a
-- name in previous_names is NULL, empty or longer than 200 characters.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, previous_names text[] DEFAULT '{}'::text[])
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_id       bigint;
    v_previous text[] := '{}';
    v_name     text;
    v_fresh    boolean := false;
    v_last     timestamptz;
    v_task     text;
    v_queue    text;
    v_old_last timestamptz;
BEGIN
    v_checked := taskboard.check_name('schedule', enqueue_periodic.schedule);
    v_checked := taskboard.check_given('slot', enqueue_periodic.slot);
    v_checked := taskboard.check_arg(pg_catalog.isfinite(enqueue_periodic.slot),
                     'slot must be a finite time, got ' || enqueue_periodic.slot);
    v_checked := taskboard.check_time('slot', enqueue_periodic.slot);
    v_checked := taskboard.check_arg(enqueue_periodic.slot <= v_now,
                     pg_catalog.format('slot must not be later than the database clock (%s), got %s', v_now, enqueue_periodic.slot));
    -- The same checks as enqueue's, made before the slot is looked at: bad
    -- input is refused whether or not the slot is still free.
    v_checked := taskboard.check_name('task', enqueue_periodic.task);
    v_checked := taskboard.check_name('queue', enqueue_periodic.queue);
    v_checked := taskboard.check_given('payload', enqueue_periodic.payload);
    v_checked := taskboard.check_given('priority', enqueue_periodic.priority);
    v_checked := taskboard.check_between('max_attempts', enqueue_periodic.max_attempts, 1);
    FOREACH v_name IN ARRAY COALESCE(enqueue_periodic.previous_names, '{}') LOOP
        v_checked := taskboard.check_name('previous_names', v_name);
        IF v_name <> enqueue_periodic.schedule THEN
            v_previous := v_previous || v_name;
        END IF;
    END LOOP;

    -- The schedule's row, locked: a concurrent caller of the same schedule
    -- waits here for this transaction, then sees the slot taken (or, after
    -- a rollback, free).
    SELECT s.last_slot, s.task, s.queue
      INTO v_last, v_task, v_queue
      FROM taskboard.schedule_slots AS s
     WHERE s.schedule = enqueue_periodic.schedule
       FOR UPDATE;
    IF NOT FOUND THEN
        -- The first call under this name. A renamed schedule's row starts
        -- as the latest of its previous names' rows, so that no slot they
        -- had is enqueued again. It takes this declaration's task and
        -- queue: a rename may change them too, and its first slot is then
        -- no conflict.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        SELECT enqueue_periodic.schedule, p.last_slot, p.last_job_id,
               enqueue_periodic.task, enqueue_periodic.queue, v_now
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous)
         ORDER BY p.last_slot DESC
         LIMIT 1
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        -- Otherwise the row starts with this slot, taken.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        VALUES (enqueue_periodic.schedule, enqueue_periodic.slot, NULL,
                enqueue_periodic.task, enqueue_periodic.queue, v_now)
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        v_fresh := FOUND;
        IF NOT v_fresh THEN
            SELECT s.last_slot, s.task, s.queue
              INTO v_last, v_task, v_queue
              FROM taskboard.schedule_slots AS s
             WHERE s.schedule = enqueue_periodic.schedule
               FOR UPDATE;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        IF v_last >= enqueue_periodic.slot THEN
            -- Taken. By this task on this queue: the schedule's job; by
            -- another: a conflict, never passed off as the schedule's job.
            -- NULL task: a row from before 0.4.5 whose job was pruned.
            IF v_task IS NOT NULL
               AND (v_task, v_queue) IS DISTINCT FROM (enqueue_periodic.task, enqueue_periodic.queue) THEN
                RAISE EXCEPTION 'schedule % has its slot % (or a later one, %) taken by task % on queue %, not task % on queue %',
                        enqueue_periodic.schedule, enqueue_periodic.slot, v_last, v_task, v_queue,
                        enqueue_periodic.task, enqueue_periodic.queue
                    USING ERRCODE = 'unique_violation',
                          HINT = 'two declarations share this schedule name; rename one, or remove the row with taskboard.remove_schedule';
            END IF;
            RETURN NULL;
        END IF;
    END IF;

    -- A worker still declaring an old name may have taken this slot under
    -- it since: its rows are locked (in name order) and compared too, so
    -- the new name enqueues no slot an old one holds, whichever came first.
    IF pg_catalog.cardinality(v_previous) > 0 THEN
        PERFORM
           FROM taskboard.schedule_slots AS p
          WHERE p.schedule = ANY (v_previous)
          ORDER BY p.schedule
            FOR UPDATE;
        SELECT pg_catalog.max(p.last_slot)
          INTO v_old_last
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous);
        IF v_old_last >= enqueue_periodic.slot THEN
            RETURN NULL;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        UPDATE taskboard.schedule_slots AS s
           SET last_slot = enqueue_periodic.slot,
               last_job_id = NULL,
               task = enqueue_periodic.task,
               queue = enqueue_periodic.queue,
               updated_at = v_now
         WHERE s.schedule = enqueue_periodic.schedule;
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
    -- The slot is taken under the previous names too, so that a worker
    -- still declaring an old name finds it taken.
    UPDATE taskboard.schedule_slots AS s
       SET last_slot = enqueue_periodic.slot,
           last_job_id = v_id,
           task = enqueue_periodic.task,
           queue = enqueue_periodic.queue,
           updated_at = v_now
     WHERE s.schedule = ANY (v_previous)
       AND s.last_slot < enqueue_periodic.slot;
    RETURN v_id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) TO taskboard_admin;
