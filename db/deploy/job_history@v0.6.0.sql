-- Deploy taskboard:job_history to pg
-- requires: job_events
--
-- The reading side of taskboard.job_events, for the admin role (the
-- dashboard's job page): no token and no digest of one.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- job_history(job_id) -> setof (at, kind, worker, actor, attempt, fence, lease_expires_at)
-- The job's history beyond its errors, oldest first: 'reclaimed' (worker's
-- expired lease taken over by actor, a worker name), 'cancelled' (by actor,
-- a login role; worker is the holder when the job was running), 'retried'
-- (by actor, a login role), and 'refused_complete', 'refused_fail',
-- 'refused_renew' (a late write by worker, whose lease was reclaimed or
-- cancelled, refused by the fence; once per lease and kind). attempt, fence
-- and lease_expires_at are the holder's. Never a token.
-- No rows: the job is unknown or has no such history.
-- Raises 22023 when job_id is NULL.

CREATE OR REPLACE FUNCTION taskboard.job_history(job_id bigint)
RETURNS TABLE (
    at               timestamptz,
    kind             text,
    worker           text,
    actor            text,
    attempt          integer,
    fence            bigint,
    lease_expires_at timestamptz
)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF job_history.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT e.at, e.kind, e.worker, e.actor, e.attempt, e.fence, e.lease_expires_at
      FROM taskboard.job_events AS e
     WHERE e.job_id = job_history.job_id
     ORDER BY e.at, e.id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.job_history(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.job_history(bigint)
    TO :"admin_role";

COMMENT ON FUNCTION taskboard.job_history(bigint) IS
$comment$job_history(job_id) -> setof (at, kind, worker, actor, attempt, fence, lease_expires_at)
The job's history beyond its errors, oldest first: 'reclaimed' (worker's
expired lease taken over by actor, a worker name), 'cancelled' (by actor,
a login role; worker is the holder when the job was running), 'retried'
(by actor, a login role), and 'refused_complete', 'refused_fail',
'refused_renew' (a late write by worker, whose lease was reclaimed or
cancelled, refused by the fence; once per lease and kind). attempt, fence
and lease_expires_at are the holder's. Never a token.
No rows: the job is unknown or has no such history.
Raises 22023 when job_id is NULL.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
