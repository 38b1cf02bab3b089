-- grant_leases(ids, most, worker, lease, clock) -> setof taskboard.claimed
-- Internal: the one place a lease is granted. Of the jobs `ids` names that
-- are queued or running, takes at most `most`, the first in claim order
-- (priority, higher first, then run_at, then id), and gives each a fresh
-- lease token, lease_expires_at = clock + lease, attempt + 1, fence + 1,
-- started_at = clock, claimed_by = worker and state 'running'. Returns
-- them in claim order, with waited: clock minus run_at for a queued job,
-- minus the expired lease's deadline for a running one (a reclaim). Each
-- reclaim writes a line 'reclaimed' in the job's history with the lease it
-- took over (holder, attempt, fence, deadline, token digest), its actor
-- the role in force (the one SET ROLE chose, else the login) and
-- actor_worker the worker. The caller has locked every row of `ids` (FOR
-- NO KEY UPDATE) and chosen it: a picker of taskboard.claim.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.grant_leases(ids bigint[], most integer, worker text, lease interval, clock timestamp with time zone)
 RETURNS SETOF taskboard.claimed
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN QUERY
    WITH chosen AS MATERIALIZED (
        -- The rows as they are before the grant, found by id only.
        SELECT o.id, o.state, o.priority, o.run_at, o.claimed_by, o.attempt, o.fence,
               o.lease_expires_at, o.lease_token
          FROM taskboard.jobs AS o
         WHERE o.id = ANY (grant_leases.ids)
           AND o.state IN ('queued', 'running')
         ORDER BY o.priority DESC, o.run_at, o.id
         LIMIT grant_leases.most
    ),
    granted AS (
        -- By id through an array, and by id only: joined to `chosen`
        -- instead, the plan kept from an empty table walked the whole
        -- primary key. The state test repeats the fence for the reader.
        UPDATE taskboard.jobs AS j
           SET state = 'running',
               lease_token = pg_catalog.gen_random_uuid(),
               lease_expires_at = grant_leases.clock + grant_leases.lease,
               attempt = j.attempt + 1,
               fence = j.fence + 1,
               started_at = grant_leases.clock,
               claimed_by = grant_leases.worker
         WHERE j.id = ANY (ARRAY(SELECT c.id FROM chosen AS c))
           AND j.state IN ('queued', 'running')
        RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                  j.idempotency_key, j.fence, j.trace_context
    ),
    reclaimed AS (
        INSERT INTO taskboard.job_events
               (job_id, kind, at, worker, actor, actor_worker, attempt, fence, lease_expires_at,
                token_digest)
        SELECT c.id, 'reclaimed', grant_leases.clock, c.claimed_by,
               coalesce(NULLIF(pg_catalog.current_setting('role'), 'none'), pg_catalog.session_user()::text),
               grant_leases.worker, c.attempt, c.fence, c.lease_expires_at,
               pg_catalog.sha256(pg_catalog.uuid_send(c.lease_token))
          FROM chosen AS c
         WHERE c.state = 'running'
           AND c.id IN (SELECT g.id FROM granted AS g)
    )
    SELECT g.id, g.lease_token, g.task, g.payload, g.attempt, g.lease_expires_at, g.idempotency_key,
           g.fence, g.trace_context,
           grant_leases.clock - CASE WHEN c.state = 'running' THEN c.lease_expires_at ELSE c.run_at END
      FROM granted AS g
      JOIN chosen AS c ON c.id = g.id
     ORDER BY c.priority DESC, c.run_at, c.id;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.grant_leases(bigint[],integer,text,interval,timestamp with time zone) FROM PUBLIC;
