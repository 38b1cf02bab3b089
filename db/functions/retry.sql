-- retry(job_id) -> boolean
-- An administrator gives a dead or cancelled job another chance: it is
-- queued again with its attempts reset; its error history is kept, and
-- the retry is a line of its history (taskboard.job_history). It is
-- runnable now, and NOTIFY taskboard, '<queue>' is sent; except a job
-- cancelled while running whose lease had not ended (its held_until, see
-- taskboard.cancel): that one is runnable when that lease ends. Until then
-- its holder may still believe it holds the job: its writes are refused,
-- but an effect outside the database is not, and a second holder must not
-- start beside it. A job cancelled while queued (after a release too) has
-- no holder to wait for. Likewise a job with a dedupe_key is runnable no
-- sooner than the held_until of a cancelled job of its queue and task with
-- that key. A job cancelled while it waited for dependencies (see
-- taskboard.enqueue's depends_on) waits again for those that have not ended;
-- it locks none of them. The history line names the role in force (the one
-- SET ROLE chose, else the login).
-- true:  queued again (or waiting again).
-- false: the job is not dead or cancelled (or unknown), or its dedupe_key is
--        now held by another unfinished job of the queue; nothing changes.
-- Raises 22023 when job_id is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.retry(job_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_queue text;
    v_run_at timestamptz;
    v_task text;
    v_key text;
    v_held_until timestamptz;
    v_left integer;
BEGIN
    v_checked := taskboard.check_given('job_id', retry.job_id);

    BEGIN
        -- A job that waited for dependencies waits again for the edges it
        -- still has: its count of them, kept by each settle that removed
        -- one. A settle in flight that holds the row is waited for; one
        -- that comes while this transaction holds it skips the row, and a
        -- later claim settles it (recheck_dependencies).
        UPDATE taskboard.jobs AS j
           SET state = CASE WHEN j.dependencies_left > 0 THEN 'waiting' ELSE 'queued' END,
               run_at = GREATEST(v_now, j.held_until),
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue, j.run_at, j.task, j.dedupe_key, coalesce(j.dependencies_left, 0)
             INTO v_queue, v_run_at, v_task, v_key, v_left;
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
    VALUES (retry.job_id, 'retried', v_now,
            -- The role in force: the one SET ROLE chose, else the login.
            CASE pg_catalog.current_setting('role')
                WHEN 'none' THEN pg_catalog.session_user()::text
                ELSE pg_catalog.current_setting('role')
            END);

    IF v_run_at <= v_now AND v_left = 0 THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.retry(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.retry(bigint) TO taskboard_admin;
