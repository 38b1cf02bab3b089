-- cancel(job_id) -> boolean
-- An administrator stops a job: waiting, queued or running becomes
-- cancelled with finished_at. The jobs waiting on it are cancelled after it
-- (with the error 'dependency N ended cancelled'), but for those enqueued
-- with on_dependency_failure 'run', which count it as ended and are due no
-- sooner than its held_until (below); a job with very many dependents has
-- 1000 of them settled in this call and the rest soon after, by later
-- claims. A holder's token stops being current, so its later renew,
-- complete, fail and release answer NULL/false. A running job whose lease
-- has not ended keeps, until that lease's deadline (held_until), its place
-- under its queue's limit and its dedupe key: the holder may believe it
-- holds the job until then, so no other job takes its place, a job enqueued
-- with its key meanwhile is due no sooner, and a retry of it neither.
-- The cancel is a line of the job's history (taskboard.job_history), naming
-- the holder of a running job, and as its actor the role in force (the one
-- SET ROLE chose, else the login).
-- true:  cancelled now.
-- false: the job is already finished (succeeded, dead, cancelled) or unknown.
-- Raises 22023 when job_id is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.cancel(job_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    v_checked := taskboard.check_given('job_id', cancel.job_id);

    -- The history line, from the row as it is before the cancel (locked
    -- here, so the UPDATE below changes the row this line describes).
    INSERT INTO taskboard.job_events
           (job_id, kind, actor, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT j.id, 'cancelled',
           -- The role in force: the one SET ROLE chose, else the login.
           CASE pg_catalog.current_setting('role')
               WHEN 'none' THEN pg_catalog.session_user()::text
               ELSE pg_catalog.current_setting('role')
           END,
           CASE WHEN j.state = 'running' THEN j.claimed_by END,
           CASE WHEN j.state = 'running' THEN j.attempt END,
           CASE WHEN j.state = 'running' THEN j.fence END,
           CASE WHEN j.state = 'running' THEN j.lease_expires_at END,
           CASE WHEN j.state = 'running' THEN pg_catalog.sha256(pg_catalog.uuid_send(j.lease_token)) END
      FROM taskboard.jobs AS j
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running')
       -- The lock the UPDATE below takes anyway: a FOR KEY SHARE held by
       -- an open enqueue that depends on the job does not hold it up.
       FOR NO KEY UPDATE;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = v_now,
           -- The holder of a live lease may act until its deadline.
           held_until = CASE WHEN j.state = 'running' AND j.lease_expires_at > v_now
                             THEN j.lease_expires_at
                             ELSE j.held_until
                        END
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running');
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Its dependents, read in a statement of their own with the row locked:
    -- this snapshot shows every edge committed before the lock (the
    -- UPDATE's may predate a wait for it).
    IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = cancel.job_id)
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM taskboard.settle_dependents(ARRAY[cancel.job_id]);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.cancel(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint) TO taskboard_admin;
