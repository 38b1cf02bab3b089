-- enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
-- Inserts a queued job, runnable from run_at (NULL = now), and returns its id.
-- With concurrency_key, the job counts toward that key's limit in its queue
-- (taskboard.set_key_limit); NULL: no key.
-- trace_context (the caller's W3C trace context, e.g. {"traceparent": ...})
-- is stored with the job and handed to its holder by claim; NULL: none.
-- With depends_on (job ids of any queue), the job is `waiting` until each of
-- them has ended: claim never takes it. When the last ends succeeded, the
-- call that completed it makes the job queued in its own transaction (a
-- refused completion releases nothing), runnable from run_at or then,
-- whichever is later. When one ends dead or cancelled, the job is cancelled
-- with the error 'dependency N ended dead' (or cancelled), and the jobs
-- waiting on it after it; with on_dependency_failure 'run' that dependency
-- counts as ended and the job still runs. Dependencies that succeeded
-- already count as ended; one already dead or cancelled cancels the job at
-- once (or, with 'run', counts as ended). A job cannot depend on a later
-- one, so dependencies never form a cycle. An empty depends_on names no
-- dependency: the job is enqueued as without it, and may have a dedupe_key.
-- With dedupe_key: when an unfinished (queued or running) job of the same
-- queue and the same task holds that key, returns that job's id and inserts
-- nothing. A key is scoped to (queue, task, key): an unfinished job of
-- another task with the same key is not the same job, and a new one is
-- inserted. The unique index jobs_unfinished_task_dedupe_key makes this hold
-- under concurrent callers; in REPEATABLE READ or SERIALIZABLE a race may
-- raise 40001. A key held by a job cancelled under a live lease (its
-- held_until, see taskboard.cancel) is no unfinished job's: a new job is
-- inserted, runnable no sooner than that lease's end.
-- Sends NOTIFY taskboard, '<queue>' when the new job is runnable now.
-- Joins the caller's transaction: a rollback takes the job with it.
-- Raises 22023 when task or queue is NULL, empty or longer than 200
-- characters, payload, priority or max_attempts is NULL, max_attempts < 1,
-- dedupe_key is empty or longer than 400 characters, or run_at is
-- 'infinity' or '-infinity' or outside the years 1 to 9999 (before
-- 0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
-- strings or is longer than 8192 bytes as text, or concurrency_key is empty
-- or longer than 200 characters, or on_dependency_failure is not cancel or
-- run, or is 'run' without depends_on (NULL), or depends_on is not
-- one-dimensional, holds NULL, names more than 100000 jobs or a job that
-- does not exist, or names a job and comes with a dedupe_key.
-- Raises 23505 when an unfinished job of the queue and task holds a
-- different key with the same SHA-256 as dedupe_key (no such pair is known):
-- the index cannot tell the two apart, and the other job is not the answer.
-- Calls of the seven-, eight- and nine-argument forms of earlier releases
-- resolve to this one: the arguments it gained come last, with defaults.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.enqueue(task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_key text DEFAULT NULL::text, trace_context jsonb DEFAULT NULL::jsonb, concurrency_key text DEFAULT NULL::text, depends_on bigint[] DEFAULT NULL::bigint[], on_dependency_failure text DEFAULT 'cancel'::text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now    timestamptz := pg_catalog.clock_timestamp();
    v_run_at timestamptz := coalesce(enqueue.run_at, v_now);
    v_id     bigint;
    v_hash   bytea;
    v_held   text;
    v_held_until timestamptz;
BEGIN
    v_checked := taskboard.check_arg(pg_catalog.isfinite(v_run_at), 'run_at must be a finite time, got ' || enqueue.run_at);
    v_checked := taskboard.check_time('run_at', v_run_at);
    v_checked := taskboard.check_name('task', enqueue.task);
    v_checked := taskboard.check_name('queue', enqueue.queue);
    v_checked := taskboard.check_given('payload', enqueue.payload);
    v_checked := taskboard.check_given('priority', enqueue.priority);
    v_checked := taskboard.check_between('max_attempts', enqueue.max_attempts, 1);
    v_checked := taskboard.check_key('dedupe_key', enqueue.dedupe_key, 400, 'NULL means no key');
    v_checked := taskboard.check_key('concurrency_key', enqueue.concurrency_key, 200, 'NULL means no key');
    v_checked := taskboard.check_trace_context(enqueue.trace_context);
    v_checked := taskboard.check_choice('on_dependency_failure', enqueue.on_dependency_failure, 'cancel', 'run');
    v_checked := taskboard.check_arg(enqueue.on_dependency_failure = 'cancel' OR enqueue.depends_on IS NOT NULL,
                     'on_dependency_failure ''run'' needs depends_on: a job without dependencies has none to fail'
                     ' (pass depends_on, or leave on_dependency_failure out)');

    -- An empty depends_on names no dependency: the job is enqueued as
    -- without one (a dedupe_key allowed).
    IF pg_catalog.cardinality(enqueue.depends_on) > 0 THEN
        RETURN taskboard.enqueue_waiting(enqueue.task, enqueue.payload, enqueue.queue, v_run_at,
                                         enqueue.priority, enqueue.max_attempts, enqueue.dedupe_key,
                                         enqueue.trace_context, enqueue.concurrency_key,
                                         enqueue.depends_on, enqueue.on_dependency_failure);
    END IF;

    -- The index holds the key's SHA-256, not the key (queue, task and key
    -- at their limits are too long for one btree entry): ON CONFLICT names
    -- the index's own expression, and the look-up uses it too, so that it
    -- finds the holder through the index. See deploy/dedupe_scope.sql.
    v_hash := pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(enqueue.dedupe_key, E'\\', E'\\\\'), 'escape'));

    LOOP
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                         trace_context, concurrency_key)
        VALUES (enqueue.queue, enqueue.task, enqueue.payload, enqueue.priority, v_run_at,
                enqueue.max_attempts, enqueue.dedupe_key, enqueue.trace_context, enqueue.concurrency_key)
        ON CONFLICT (queue, task,
                     pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
           WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
           DO NOTHING
        RETURNING j.id INTO v_id;
        EXIT WHEN v_id IS NOT NULL;

        -- An unfinished job of the queue and task holds the key's hash. When
        -- it holds the same key, its id is the answer. A different key with
        -- the same SHA-256 is one key to the unique index, which keeps out
        -- a second unfinished job as long as the first is unfinished: say so
        -- rather than answer with the other key's job. Should the job finish
        -- before this statement sees it, the key is free: insert again.
        SELECT j.id, j.dedupe_key
          INTO v_id, v_held
          FROM taskboard.jobs AS j
         WHERE j.queue = enqueue.queue
           AND j.task = enqueue.task
           AND pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(j.dedupe_key, E'\\', E'\\\\'), 'escape')) = v_hash
           AND j.dedupe_key IS NOT NULL
           AND j.state IN ('queued', 'running');
        IF FOUND THEN
            IF v_held <> enqueue.dedupe_key THEN
                RAISE EXCEPTION 'dedupe_key has the same SHA-256 as the different key of unfinished job % of this queue and task', v_id
                    USING ERRCODE = 'unique_violation';
            END IF;
            RETURN v_id;
        END IF;
    END LOOP;

    IF enqueue.dedupe_key IS NOT NULL THEN
        -- The key is still held by a job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = enqueue.queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = enqueue.task
           AND c.dedupe_key = enqueue.dedupe_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = v_id;
            v_run_at := v_held_until;
        END IF;
    END IF;

    IF v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue.queue);
    END IF;
    RETURN v_id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO taskboard_producer;
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO taskboard_admin;
