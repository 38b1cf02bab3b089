-- Revert taskboard:worker_leases to its v0.6.0 definition
--
-- Puts back the definition, comment and grants of release 0.6.0: its rows
-- without state (DROP and CREATE, as the return type changes).

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP FUNCTION taskboard.worker_leases(integer);

CREATE FUNCTION taskboard.worker_leases(max_rows integer DEFAULT 500)
RETURNS TABLE (
    worker           text,
    job_id           bigint,
    queue            text,
    task             text,
    attempt          integer,
    fence            bigint,
    started_at       timestamptz,
    lease_expires_at timestamptz,
    expires_in       interval
)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF worker_leases.max_rows IS NULL OR worker_leases.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000, got %', worker_leases.max_rows
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT j.claimed_by, j.id, j.queue, j.task, j.attempt, j.fence, j.started_at,
           j.lease_expires_at, j.lease_expires_at - v_now
      FROM taskboard.jobs AS j
     WHERE j.state = 'running'
     ORDER BY j.claimed_by, j.lease_expires_at, j.id
     LIMIT worker_leases.max_rows;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.worker_leases(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.worker_leases(integer)
    TO :"admin_role";

COMMENT ON FUNCTION taskboard.worker_leases(integer) IS
$comment$worker_leases(max_rows) -> setof (worker, job_id, queue, task, attempt, fence, started_at, lease_expires_at, expires_in)
Who holds what: one row per running job, by worker (claimed_by), then the
lease that ends first; at most max_rows rows (default 500). started_at is
the holder's claim, lease_expires_at its deadline, expires_in that
deadline minus the database's clock (negative: the lease expired and the
job waits for a reclaim, or for claim to bury it). A cancelled job whose
lease is still ahead is not listed: it is no longer running. Never a
token.
Raises 22023 when max_rows is NULL or outside 1..1000.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
