-- CANDIDATE (bench/claimcost.py --taskboard-sql), measured on 0.4.6's claim:
-- part of claim-one-statement.sql. A lease of whole hours, minutes and
-- seconds within (0, 12 hours] is checked inline; check_interval judges
-- every other one. Alone it saves the call of check_interval (about 0.008
-- ms a claim).
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
    v_paused boolean;
    v_limit integer;
    -- How many queued jobs this call may start: batch, or less under a limit.
    v_room integer := claim.batch;
BEGIN
    IF claim.queue IS NULL OR claim.queue = '' THEN
        RAISE EXCEPTION 'queue must not be NULL or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(claim.queue) > 200 THEN
        RAISE EXCEPTION 'queue must be at most 200 characters, got %', pg_catalog.char_length(claim.queue)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF claim.worker IS NULL OR claim.worker = '' THEN
        RAISE EXCEPTION 'worker must not be NULL or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(claim.worker) > 200 THEN
        RAISE EXCEPTION 'worker must be at most 200 characters, got %', pg_catalog.char_length(claim.worker)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF claim.batch IS NULL OR claim.batch NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'batch must be between 1 and 1000, got %', claim.batch
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- A lease of whole hours, minutes and seconds (no month or day part)
    -- adds to any clock alike: in (0, 12 hours] it passes without the full
    -- check, which judges every other lease by the deadline it gives.
    IF (claim.lease > interval '0' AND claim.lease <= interval '12 hours'
        AND pg_catalog.date_part('day', claim.lease) = 0
        AND pg_catalog.date_part('month', claim.lease) = 0
        AND pg_catalog.date_part('year', claim.lease) = 0) IS NOT TRUE THEN
        PERFORM taskboard.check_interval('lease', claim.lease, interval '12 hours');
    END IF;

    -- A claim in flight is one a first limit must count: it holds its
    -- queue's advisory lock, shared with every other claim, until its
    -- transaction ends; set_queue_limit takes it exclusively before it
    -- writes a first limit. Taken at once unless a first limit is being
    -- set; then this claim waits for it, and reads it below (a new
    -- snapshot in READ COMMITTED; an older one cannot see it: 40001).
    IF NOT pg_catalog.pg_try_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue)) THEN
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue));
        IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'queue % was given a limit while this transaction waited; retry the transaction', claim.queue
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;

    -- Queue control. A queue without a row in taskboard.queues is unpaused
    -- and unlimited: one primary-key probe, no lock.
    SELECT q.paused, q.max_running INTO v_paused, v_limit
      FROM taskboard.queues AS q
     WHERE q.queue = claim.queue;
    IF v_limit IS NULL
       AND pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        -- A snapshot taken before a first limit committed does not see it,
        -- and this claim did not wait for it. Writing the queue's row (an
        -- unpaused, unlimited one when there is none) makes PostgreSQL
        -- raise 40001 when the row was written since the snapshot.
        INSERT INTO taskboard.queues AS q (queue) VALUES (claim.queue)
        ON CONFLICT ON CONSTRAINT queues_pkey DO NOTHING;
    END IF;
    IF v_limit IS NOT NULL THEN
        -- Claimers of a limited queue take turns on its row, held until the
        -- caller's transaction ends: the count below sees every claim made
        -- before, so together they never pass the limit. Reclaiming an
        -- expired job does not add a running one; starting a queued job does.
        -- Each writes the row (the same values) rather than only locking it:
        -- in REPEATABLE READ or SERIALIZABLE the snapshot was taken before
        -- the wait and would miss the claim it waited for, and a row updated
        -- since the snapshot makes PostgreSQL raise 40001 instead.
        UPDATE taskboard.queues AS q
           SET paused = q.paused
         WHERE q.queue = claim.queue
        RETURNING q.paused, q.max_running INTO v_paused, v_limit;
        SELECT GREATEST(0, v_limit - pg_catalog.count(*) - (
                   -- Places still held: cancelled under a live lease
                   -- (taskboard.cancel), or retried since and not yet due.
                   SELECT pg_catalog.count(*)
                     FROM taskboard.jobs AS h
                    WHERE h.queue = claim.queue
                      AND h.held_until > v_now
                      AND h.state <> 'running'))::integer INTO v_room
          FROM taskboard.jobs AS j
         WHERE j.queue = claim.queue
           AND j.state = 'running'
           AND NOT (j.lease_expires_at <= v_now AND j.attempt >= j.max_attempts);
        v_room := LEAST(v_room, claim.batch);
    END IF;
    IF v_paused THEN
        RETURN;
    END IF;

    -- The common path: no limit, and no lease of the queue expired by v_now
    -- (nothing to bury or reclaim; the check walks this queue's running
    -- jobs, as the steps below would). Only queued jobs can be taken, and
    -- nothing is recorded in the history.
    IF v_limit IS NULL AND NOT EXISTS (
        SELECT
          FROM taskboard.jobs AS x
         WHERE x.queue = claim.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= v_now) THEN
        RETURN QUERY
        WITH queued AS MATERIALIZED (
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = claim.queue
               AND j.state = 'queued'
               AND j.run_at <= v_now
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT claim.batch
               FOR UPDATE SKIP LOCKED
        ),
        claimed AS (
            -- By id through an array: joined to `queued` instead, the plan
            -- kept from an empty table walked the whole primary key.
            UPDATE taskboard.jobs AS j
               SET state = 'running',
                   lease_token = pg_catalog.gen_random_uuid(),
                   lease_expires_at = v_now + claim.lease,
                   attempt = j.attempt + 1,
                   fence = j.fence + 1,
                   started_at = v_now,
                   claimed_by = claim.worker
             WHERE j.id = ANY (ARRAY(SELECT q.id FROM queued AS q))
               AND j.queue = claim.queue
               AND j.state = 'queued'
            RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                      j.idempotency_key, j.fence, j.trace_context, v_now - j.run_at AS waited,
                      j.priority, j.run_at
        )
        SELECT c.id, c.lease_token, c.task, c.payload, c.attempt, c.lease_expires_at,
               c.idempotency_key, c.fence, c.trace_context, c.waited
          FROM claimed AS c
         ORDER BY c.priority DESC, c.run_at, c.id;
        RETURN;
    END IF;

    RETURN QUERY
    WITH doomed AS MATERIALIZED (
        -- Expired leases with no attempt left, locked once per call: an
        -- IN (subquery ... FOR UPDATE) was planned to rerun per running row.
        SELECT x.id
          FROM taskboard.jobs AS x
         WHERE x.queue = claim.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= v_now
           AND x.attempt >= x.max_attempts
           FOR UPDATE SKIP LOCKED
    ),
    buried AS (
        -- They are dead now, never handed out. Found by id among this
        -- queue's running jobs: a plan made while the table was empty walks
        -- the running jobs' index, and without the queue it would walk every
        -- queue's.
        UPDATE taskboard.jobs AS j
           SET state = 'dead',
               finished_at = v_now,
               errors = j.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                   'error', 'lease expired',
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', v_now))
         WHERE j.id = ANY (ARRAY(SELECT d.id FROM doomed AS d))
           AND j.queue = claim.queue
           AND j.state = 'running'
    ),
    expired AS MATERIALIZED (
        -- Reclaimable: the few running jobs of the queue whose lease ran out.
        SELECT j.id, j.priority, j.run_at, j.lease_expires_at AS due_at
          FROM taskboard.jobs AS j
         WHERE j.queue = claim.queue
           AND j.state = 'running'
           AND j.lease_expires_at <= v_now
           AND j.attempt < j.max_attempts
         ORDER BY j.priority DESC, j.run_at, j.id
         LIMIT claim.batch
           FOR UPDATE SKIP LOCKED
    ),
    queued AS MATERIALIZED (
        SELECT j.id, j.priority, j.run_at, j.run_at AS due_at
          FROM taskboard.jobs AS j
         WHERE j.queue = claim.queue
           AND j.state = 'queued'
           AND j.run_at <= v_now
         ORDER BY j.priority DESC, j.run_at, j.id
         LIMIT v_room
           FOR UPDATE SKIP LOCKED
    ),
    chosen AS (
        SELECT c.id, c.due_at
          FROM (SELECT e.id, e.priority, e.run_at, e.due_at FROM expired AS e
                UNION ALL
                SELECT q.id, q.priority, q.run_at, q.due_at FROM queued AS q) AS c
         ORDER BY c.priority DESC, c.run_at, c.id
         LIMIT claim.batch
    ),
    claimed AS (
        -- Every chosen row is locked by this statement; the state test
        -- repeats the fence for the reader.
        UPDATE taskboard.jobs AS j
           SET state = 'running',
               lease_token = pg_catalog.gen_random_uuid(),
               lease_expires_at = v_now + claim.lease,
               attempt = j.attempt + 1,
               fence = j.fence + 1,
               started_at = v_now,
               claimed_by = claim.worker
          FROM chosen AS c
         WHERE j.id = c.id
           AND j.state IN ('queued', 'running')
        RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                  j.idempotency_key, j.fence, j.trace_context, v_now - c.due_at AS waited,
                  j.priority, j.run_at
    ),
    reclaimed AS (
        -- The lease each reclaim took over, as a line of the job's history.
        -- The statement's snapshot still shows the row as it was before
        -- `claimed`. A claim that reclaims nothing finds no id and writes
        -- nothing.
        INSERT INTO taskboard.job_events
               (job_id, kind, at, worker, actor, attempt, fence, lease_expires_at, token_digest)
        SELECT o.id, 'reclaimed', v_now, o.claimed_by, claim.worker, o.attempt, o.fence,
               o.lease_expires_at, pg_catalog.sha256(pg_catalog.uuid_send(o.lease_token))
          FROM taskboard.jobs AS o
         WHERE o.id = ANY (ARRAY(SELECT e.id FROM expired AS e JOIN claimed AS c ON c.id = e.id))
           AND o.queue = claim.queue
           AND o.state = 'running'
    )
    SELECT c.id, c.lease_token, c.task, c.payload, c.attempt, c.lease_expires_at, c.idempotency_key,
           c.fence, c.trace_context, c.waited
      FROM claimed AS c
     ORDER BY c.priority DESC, c.run_at, c.id;
END
$function$;
