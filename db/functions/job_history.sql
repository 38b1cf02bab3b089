-- job_history(job_id) -> setof (at, kind, worker, actor, attempt, fence, lease_expires_at, actor_worker)
-- The job's history beyond its errors, oldest first: 'reclaimed' (worker's
-- expired lease taken over by a claim: actor is the role it ran as,
-- actor_worker the worker name it stated), 'cancelled' (by actor; worker is
-- the holder when the job was running), 'retried' (by actor), and
-- 'refused_complete', 'refused_fail', 'refused_renew' (a late write by
-- worker, whose lease was reclaimed or cancelled, refused by the fence;
-- once per lease and kind). actor is the database role in force (the one
-- SET ROLE chose, else the login); on a reclaim recorded before
-- actor_worker existed it is the worker name, and actor_worker is NULL, as
-- on every line but a reclaim. attempt, fence and lease_expires_at are the
-- holder's. Never a token.
-- No rows: the job is unknown or has no such history.
-- Raises 22023 when job_id is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.job_history(job_id bigint)
 RETURNS TABLE(at timestamp with time zone, kind text, worker text, actor text, attempt integer, fence bigint, lease_expires_at timestamp with time zone, actor_worker text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_given('job_id', job_history.job_id);

    RETURN QUERY
    SELECT e.at, e.kind, e.worker, e.actor, e.attempt, e.fence, e.lease_expires_at, e.actor_worker
      FROM taskboard.job_events AS e
     WHERE e.job_id = job_history.job_id
     ORDER BY e.at, e.id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.job_history(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.job_history(bigint) TO taskboard_admin;
