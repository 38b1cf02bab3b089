-- worker_leases(max_rows) -> setof (worker, job_id, queue, task, attempt, fence, started_at, lease_expires_at, expires_in, state)
-- Who holds what: one row per running job, and per job cancelled under a
-- lease that has not ended yet (its holder may still be at work: state
-- cancelled, lease_expires_at its held_until), by worker (claimed_by), then
-- the lease that ends first; at most max_rows rows (default 500). started_at
-- is the holder's claim, lease_expires_at its deadline, expires_in that
-- deadline minus the database's clock (negative: the lease expired and the
-- job waits for a reclaim, or for claim to bury it; never for a cancelled
-- job, which leaves the list when its lease ends). state is running or
-- cancelled. Never a token.
-- Raises 22023 when max_rows is NULL or outside 1..1000.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.worker_leases(max_rows integer DEFAULT 500)
 RETURNS TABLE(worker text, job_id bigint, queue text, task text, attempt integer, fence bigint, started_at timestamp with time zone, lease_expires_at timestamp with time zone, expires_in interval, state text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    v_checked := taskboard.check_between('max_rows', worker_leases.max_rows, 1, 1000);

    RETURN QUERY
    SELECT h.claimed_by, h.id, h.queue, h.task, h.attempt, h.fence, h.started_at,
           h.lease_ends, h.lease_ends - v_now, h.state
      FROM (SELECT j.claimed_by, j.id, j.queue, j.task, j.attempt, j.fence, j.started_at,
                   j.lease_expires_at AS lease_ends, j.state
              FROM taskboard.jobs AS j
             WHERE j.state = 'running'
            UNION ALL
            -- Read through jobs_held_by_queue: only jobs cancelled while
            -- running have a held_until.
            SELECT j.claimed_by, j.id, j.queue, j.task, j.attempt, j.fence, j.started_at,
                   j.held_until, j.state
              FROM taskboard.jobs AS j
             WHERE j.held_until IS NOT NULL
               AND j.held_until > v_now
               AND j.state = 'cancelled') AS h
     ORDER BY h.claimed_by, h.lease_ends, h.id
     LIMIT worker_leases.max_rows;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.worker_leases(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.worker_leases(integer) TO taskboard_admin;
