-- Revert taskboard:enqueue to its v0.1.0 definition
-- The same text as functions/enqueue.sql, where the current definition reads.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key) -> bigint
-- Inserts a queued job, runnable from run_at (NULL = now), and returns its id.
-- With dedupe_key: when an unfinished (queued or running) job of the same
-- queue holds that key, returns that job's id and inserts nothing. The
-- unique index jobs_unfinished_dedupe_key makes this hold under concurrent
-- callers; in REPEATABLE READ or SERIALIZABLE a race may raise 40001.
-- Sends NOTIFY taskboard, '<queue>' when the new job is runnable now.
-- Joins the caller's transaction: a rollback takes the job with it.
-- Raises 22023 when task or queue is NULL, empty or longer than 200
-- characters, payload, priority or max_attempts is NULL, max_attempts < 1,
-- or dedupe_key is empty or longer than 400 characters.

CREATE OR REPLACE FUNCTION taskboard.enqueue(
    task         text,
    payload      jsonb       DEFAULT '{}',
    queue        text        DEFAULT 'default',
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 5,
    dedupe_key   text        DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_now    timestamptz := pg_catalog.clock_timestamp();
    v_run_at timestamptz := coalesce(enqueue.run_at, v_now);
    v_id     bigint;
BEGIN
    IF enqueue.task IS NULL OR enqueue.task = '' THEN
        RAISE EXCEPTION 'task must not be NULL or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(enqueue.task) > 200 THEN
        RAISE EXCEPTION 'task must be at most 200 characters, got %', pg_catalog.char_length(enqueue.task)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.queue IS NULL OR enqueue.queue = '' THEN
        RAISE EXCEPTION 'queue must not be NULL or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(enqueue.queue) > 200 THEN
        RAISE EXCEPTION 'queue must be at most 200 characters, got %', pg_catalog.char_length(enqueue.queue)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.payload IS NULL THEN
        RAISE EXCEPTION 'payload must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.priority IS NULL THEN
        RAISE EXCEPTION 'priority must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.max_attempts IS NULL OR enqueue.max_attempts < 1 THEN
        RAISE EXCEPTION 'max_attempts must be at least 1, got %', enqueue.max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.dedupe_key = '' THEN
        RAISE EXCEPTION 'dedupe_key must not be empty (NULL means no key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(enqueue.dedupe_key) > 400 THEN
        RAISE EXCEPTION 'dedupe_key must be at most 400 characters, got %', pg_catalog.char_length(enqueue.dedupe_key)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    LOOP
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key)
        VALUES (enqueue.queue, enqueue.task, enqueue.payload, enqueue.priority, v_run_at,
                enqueue.max_attempts, enqueue.dedupe_key)
        ON CONFLICT (queue, dedupe_key)
           WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
           DO NOTHING
        RETURNING j.id INTO v_id;
        EXIT WHEN v_id IS NOT NULL;

        -- An unfinished job holds the key: its id is the answer. Should it
        -- finish before this statement sees it, the key is free: insert again.
        SELECT j.id
          INTO v_id
          FROM taskboard.jobs AS j
         WHERE j.queue = enqueue.queue
           AND j.dedupe_key = enqueue.dedupe_key
           AND j.state IN ('queued', 'running');
        IF FOUND THEN
            RETURN v_id;
        END IF;
    END LOOP;

    IF v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue.queue);
    END IF;
    RETURN v_id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.enqueue(text, jsonb, text, timestamptz, integer, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text, jsonb, text, timestamptz, integer, integer, text)
    TO :"producer_role", :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
