-- Revert taskboard:cancel to its v0.5.0 definition
--
-- Puts back the definition and comment of release 0.5.0.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.cancel(job_id bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_dependents boolean;
BEGIN
    IF cancel.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The history line, from the row as it is before the cancel (locked
    -- here, so the UPDATE below changes the row this line describes).
    INSERT INTO taskboard.job_events
           (job_id, kind, actor, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT j.id, 'cancelled', pg_catalog.session_user(),
           CASE WHEN j.state = 'running' THEN j.claimed_by END,
           CASE WHEN j.state = 'running' THEN j.attempt END,
           CASE WHEN j.state = 'running' THEN j.fence END,
           CASE WHEN j.state = 'running' THEN j.lease_expires_at END,
           CASE WHEN j.state = 'running' THEN pg_catalog.sha256(pg_catalog.uuid_send(j.lease_token)) END
      FROM taskboard.jobs AS j
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running')
       FOR UPDATE;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = v_now,
           -- The holder of a live lease may act until its deadline.
           held_until = CASE WHEN j.state = 'running' AND j.lease_expires_at > v_now
                             THEN j.lease_expires_at
                             ELSE j.held_until
                        END
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running')
    RETURNING j.has_dependents INTO v_dependents;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_dependents THEN
        PERFORM taskboard.settle_dependents(ARRAY[cancel.job_id]);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.cancel(bigint) IS
$comment$cancel(job_id) -> boolean
An administrator stops a job: waiting, queued or running becomes
cancelled with finished_at. The jobs waiting on it are cancelled after it
(with the error 'dependency N ended cancelled'), but for those enqueued
with on_dependency_failure 'run', which count it as ended. A holder's token stops being current, so its later renew,
complete, fail and release answer NULL/false. A running job whose lease
has not ended keeps, until that lease's deadline (held_until), its place
under its queue's limit and its dedupe key: the holder may believe it
holds the job until then, so no other job takes its place, a job enqueued
with its key meanwhile is due no sooner, and a retry of it neither.
The cancel is a line of the job's history (taskboard.job_history), naming
the holder of a running job.
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.cancel(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
