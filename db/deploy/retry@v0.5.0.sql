-- Deploy taskboard:retry to pg
-- requires: retry@v0.4.9
-- requires: dependencies
--
-- A retried job whose dependencies have not all ended (it was cancelled
-- while it waited) waits again for those left.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.retry(job_id bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_queue text;
    v_run_at timestamptz;
    v_task text;
    v_key text;
    v_held_until timestamptz;
    v_left integer;
BEGIN
    IF retry.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The dependencies it still waits for, locked in id order and written
    -- (has_dependents), as enqueue does: a call ending one of them waits
    -- for this transaction and then settles this job, waiting again (in
    -- REPEATABLE READ or SERIALIZABLE, one whose snapshot is older raises
    -- 40001); one that ended before is not counted.
    WITH locked AS MATERIALIZED (
        SELECT p.id, p.state
          FROM taskboard.jobs AS p
         WHERE p.id = ANY (ARRAY(SELECT d.depends_on
                                   FROM taskboard.job_dependencies AS d
                                  WHERE d.job_id = retry.job_id))
         ORDER BY p.id
           FOR NO KEY UPDATE
    ),
    marked AS (
        UPDATE taskboard.jobs AS p
           SET has_dependents = true
          FROM locked AS l
         WHERE p.id = l.id
           AND l.state IN ('waiting', 'queued', 'running')
        RETURNING p.id
    )
    SELECT pg_catalog.count(*)::integer INTO v_left FROM marked;

    BEGIN
        UPDATE taskboard.jobs AS j
           SET state = CASE WHEN v_left > 0 THEN 'waiting' ELSE 'queued' END,
               dependencies_left = CASE WHEN j.dependencies_left IS NULL THEN NULL ELSE v_left END,
               run_at = GREATEST(v_now, j.held_until),
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue, j.run_at, j.task, j.dedupe_key INTO v_queue, v_run_at, v_task, v_key;
    EXCEPTION
        WHEN unique_violation THEN
            -- jobs_unfinished_dedupe_key: another unfinished job holds the key.
            RETURN false;
    END;
    IF v_queue IS NULL THEN
        RETURN false;
    END IF;
    IF v_key IS NOT NULL THEN
        -- Its key is still held by another job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = v_queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = v_task
           AND c.dedupe_key = v_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = retry.job_id;
            v_run_at := v_held_until;
        END IF;
    END IF;
    INSERT INTO taskboard.job_events (job_id, kind, at, actor)
    VALUES (retry.job_id, 'retried', v_now, pg_catalog.session_user());

    IF v_run_at <= v_now AND v_left = 0 THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.retry(bigint) IS
$comment$retry(job_id) -> boolean
An administrator gives a dead or cancelled job another chance: it is
queued again with its attempts reset; its error history is kept, and
the retry is a line of its history (taskboard.job_history). It is
runnable now, and NOTIFY taskboard, '<queue>' is sent; except a job
cancelled while running whose lease had not ended (its held_until, see
taskboard.cancel): that one is runnable when that lease ends. Until then
its holder may still believe it holds the job: its writes are refused,
but an effect outside the database is not, and a second holder must not
start beside it. A job cancelled while queued (after a release too) has
no holder to wait for. Likewise a job with a dedupe_key is runnable no
sooner than the held_until of a cancelled job of its queue and task with
that key. A job cancelled while it waited for dependencies (see
taskboard.enqueue's depends_on) waits again for those that have not ended.
true:  queued again (or waiting again).
false: the job is not dead or cancelled (or unknown), or its dedupe_key is
       now held by another unfinished job of the queue; nothing changes.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.retry(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.retry(bigint)
    TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
