-- Deploy taskboard:cancel to pg
-- requires: cancel@v0.4.4
-- requires: job_events
--
-- cancel records the cancel in the job's history (taskboard.job_events):
-- who cancelled, and for a running job its holder, attempt, fence, deadline
-- and a digest of its token, so that the holder's late writes can be
-- recorded when the fence refuses them. One INSERT before the UPDATE,
-- which it locks the row for; the UPDATE is as it was.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- cancel(job_id) -> boolean
-- An administrator stops a job: queued or running becomes cancelled with
-- finished_at. A holder's token stops being current, so its later renew,
-- complete, fail and release answer NULL/false. The cancel is a line of the
-- job's history (taskboard.job_history), naming the holder of a running job.
-- true:  cancelled now.
-- false: the job is already finished (succeeded, dead, cancelled) or unknown.
-- Raises 22023 when job_id is NULL.

CREATE OR REPLACE FUNCTION taskboard.cancel(job_id bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
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
       AND j.state IN ('queued', 'running')
       FOR UPDATE;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = pg_catalog.clock_timestamp()
     WHERE j.id = cancel.job_id
       AND j.state IN ('queued', 'running');

    RETURN FOUND;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.cancel(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint)
    TO :"admin_role";

COMMENT ON FUNCTION taskboard.cancel(bigint) IS
$comment$cancel(job_id) -> boolean
An administrator stops a job: queued or running becomes cancelled with
finished_at. A holder's token stops being current, so its later renew,
complete, fail and release answer NULL/false. The cancel is a line of the
job's history (taskboard.job_history), naming the holder of a running job.
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
