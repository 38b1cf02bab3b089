-- MEASUREMENT ONLY (bench/claimcost.py --taskboard-sql), BREAKS every check:
-- claim as its common path's statement alone, in the same SECURITY DEFINER
-- PL/pgSQL function with the same settings. What is left beside the
-- statement is the call itself.
CREATE OR REPLACE FUNCTION taskboard.claim(queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT '00:01:00'::interval)
 RETURNS SETOF taskboard.claimed
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
        RETURN QUERY
        WITH queued AS MATERIALIZED (
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = claim.queue
               AND j.state = 'queued'
               AND j.run_at <= v_now
               AND NOT EXISTS (
                   SELECT
                     FROM taskboard.queues AS q
                    WHERE q.queue = claim.queue
                      AND (q.paused OR q.max_running IS NOT NULL))
               AND NOT EXISTS (
                   SELECT
                     FROM taskboard.jobs AS x
                    WHERE x.queue = claim.queue
                      AND x.state = 'running'
                      AND x.lease_expires_at <= v_now)
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT claim.batch
               FOR UPDATE SKIP LOCKED
        ),
        claimed AS (
            -- By id only: the rows the step above locked, which nothing
            -- changes before this update. With the queue or the state in
            -- this test, a plan made for an empty table on PostgreSQL 15
            -- walked the queue's whole queued index to find them.
            UPDATE taskboard.jobs AS j
               SET state = 'running',
                   lease_token = pg_catalog.gen_random_uuid(),
                   lease_expires_at = v_now + claim.lease,
                   attempt = j.attempt + 1,
                   fence = j.fence + 1,
                   started_at = v_now,
                   claimed_by = claim.worker
             WHERE j.id = ANY (ARRAY(SELECT q.id FROM queued AS q))
            RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                      j.idempotency_key, j.fence, j.trace_context, v_now - j.run_at AS waited,
                      j.priority, j.run_at
        )
        SELECT c.id, c.lease_token, c.task, c.payload, c.attempt, c.lease_expires_at,
               c.idempotency_key, c.fence, c.trace_context, c.waited
          FROM claimed AS c
         ORDER BY c.priority DESC, c.run_at, c.id;
END
$function$;
