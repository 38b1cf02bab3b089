-- enqueue_waiting(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
-- Internal: enqueue's insert of a job with depends_on, its other arguments
-- checked by enqueue. The job waits (state waiting) for those of depends_on
-- that have not ended, and is queued at once when all succeeded; when one
-- ended dead or cancelled, it is inserted cancelled with the error
-- 'dependency N ended dead' (or cancelled), unless on_dependency_failure is
-- 'run'. The dependencies are held with FOR KEY SHARE only, which no write
-- of their holders waits for; a job left waiting is checked again after
-- this transaction (taskboard.dependency_checks), in case a dependency ended
-- unseen meanwhile. Never granted to an application role.
-- Raises 22023 when depends_on is not one-dimensional, holds NULL, names
-- more than 10000 jobs or a job that does not exist, or dedupe_key is given.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now     timestamptz := pg_catalog.clock_timestamp();
    v_deps    bigint[];
    v_missing bigint;
    v_pending bigint[];
    v_failed  bigint;
    v_failed_state text;
    v_state   text;
    v_id      bigint;
BEGIN
    v_checked := taskboard.check_arg(coalesce(pg_catalog.array_ndims(enqueue_waiting.depends_on), 1) = 1,
                     'depends_on must be a one-dimensional array of job ids');
    v_checked := taskboard.check_items('depends_on', enqueue_waiting.depends_on);
    v_checked := taskboard.check_arg(pg_catalog.cardinality(enqueue_waiting.depends_on) <= 10000,
                     'depends_on must name at most 10000 jobs, got ' || pg_catalog.cardinality(enqueue_waiting.depends_on));
    v_checked := taskboard.check_arg(enqueue_waiting.dedupe_key IS NULL, 'a job with depends_on cannot have a dedupe_key');
    v_deps := ARRAY(SELECT DISTINCT d.id FROM pg_catalog.unnest(enqueue_waiting.depends_on) AS d(id) ORDER BY d.id);

    -- Each dependency read and held, in id order, with FOR KEY SHARE: the
    -- lock the edge's foreign key takes, which only a delete waits for, so
    -- the holders' writes go on. A dependency may then end while this
    -- transaction is open, its end unable to see the edge written here: the
    -- check written below reads each again once this transaction has
    -- committed (taskboard.recheck_dependencies). In REPEATABLE READ or
    -- SERIALIZABLE, a dependency changed since the snapshot raises 40001.
    WITH held AS MATERIALIZED (
        SELECT j.id, j.state
          FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_deps)
         ORDER BY j.id
           FOR KEY SHARE
    )
    SELECT (SELECT pg_catalog.min(d.id) FROM pg_catalog.unnest(v_deps) AS d(id)
             WHERE d.id NOT IN (SELECT h.id FROM held AS h)),
           ARRAY(SELECT h.id FROM held AS h WHERE h.state IN ('waiting', 'queued', 'running') ORDER BY h.id),
           (SELECT pg_catalog.min(h.id) FROM held AS h WHERE h.state IN ('dead', 'cancelled'))
      INTO v_missing, v_pending, v_failed;
    v_checked := taskboard.check_arg(v_missing IS NULL, 'depends_on names job ' || v_missing || ', which does not exist');

    IF v_failed IS NOT NULL AND enqueue_waiting.on_dependency_failure = 'cancel' THEN
        -- A dependency already ended dead or cancelled: the job is cancelled
        -- from the start, with the reason, and waits for nothing.
        SELECT j.state INTO v_failed_state FROM taskboard.jobs AS j WHERE j.id = v_failed;
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                         trace_context, concurrency_key, state, finished_at, errors,
                                         dependencies_left, on_dependency_failure)
        VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
                enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
                enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, 'cancelled', v_now,
                pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                    'error', pg_catalog.format('dependency %s ended %s', v_failed, v_failed_state),
                    'attempt', 0,
                    'at', v_now)),
                0, enqueue_waiting.on_dependency_failure)
        RETURNING j.id INTO v_id;
        RETURN v_id;
    END IF;

    v_state := CASE WHEN pg_catalog.cardinality(v_pending) > 0 THEN 'waiting' ELSE 'queued' END;
    INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                     trace_context, concurrency_key, state,
                                     dependencies_left, on_dependency_failure)
    VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
            enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
            enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, v_state,
            pg_catalog.cardinality(v_pending), enqueue_waiting.on_dependency_failure)
    RETURNING j.id INTO v_id;
    INSERT INTO taskboard.job_dependencies (job_id, depends_on)
    SELECT v_id, p.id FROM pg_catalog.unnest(v_pending) AS p(id);
    IF v_state = 'waiting' THEN
        INSERT INTO taskboard.dependency_checks (job_id, side) VALUES (v_id, 'dependent');
    END IF;

    IF v_state = 'queued' AND enqueue_waiting.run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue_waiting.queue);
    END IF;
    RETURN v_id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.enqueue_waiting(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) FROM PUBLIC;
