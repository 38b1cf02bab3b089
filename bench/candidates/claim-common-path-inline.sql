-- claim's common path as one statement of its own, no picker or grant called
-- (measured with bench/claimcost.py).
CREATE OR REPLACE FUNCTION taskboard.claim(queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT '00:01:00'::interval)
 RETURNS SETOF taskboard.claimed
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_paused boolean;
    v_limit integer;
    -- How many queued jobs a round may start (v_room) and how many starts
    -- it may make, reclaims included (v_cap): what is left of the batch,
    -- or less under a limit.
    v_room integer;
    v_cap integer;
    -- The queue's limit per concurrency key, and the keys a round leaves
    -- out: those at it, and those whose rate window is full.
    v_key_limit integer;
    v_full_keys text[];
    -- The queue's rate limit: at most v_rate_starts starts per v_rate_per,
    -- of the queue or (v_rate_by_key) of each key, and the keys whose
    -- window is full (found once, kept for the rounds after).
    v_rate_starts integer;
    v_rate_per interval;
    v_rate_by_key boolean := false;
    v_rate_full_keys text[] := '{}';
    -- Under a key limit or a rate per key (v_keyed) a claim goes round
    -- again while it is short of its batch and its last round started
    -- something: rows handed out so far, how many the next round may hand
    -- out, and the last round's rows. The first round goes round again too
    -- when a spent lease of a key is left to bury (v_frees).
    v_keyed boolean;
    v_taken integer := 0;
    v_want integer := claim.batch;
    v_rows integer;
    v_frees boolean := false;
    -- A round's candidates: its reclaims, then the queued jobs it picked.
    v_reclaims bigint[];
    v_ids bigint[];
BEGIN
    v_checked := taskboard.check_name('queue', claim.queue);
    v_checked := taskboard.check_name('worker', claim.worker);
    v_checked := taskboard.check_between('batch', claim.batch, 1, 1000);
    v_checked := taskboard.check_interval('lease', claim.lease, interval '12 hours');

    -- Dependency edges written while a dependency could end, and ends with
    -- dependents left to settle, once their transactions have committed: a
    -- few of them per claim, whatever its queue (most claims find none).
    IF EXISTS (SELECT FROM taskboard.dependency_checks) THEN
        PERFORM taskboard.recheck_dependencies();
    END IF;

    -- A claim in flight is one a first limit must count: it holds its
    -- queue's advisory lock, shared with every other claim, until its
    -- transaction ends; set_limit takes it exclusively before it writes a
    -- limit. Taken at once unless a limit is being set; then this claim
    -- waits for it, and reads it below (a new snapshot in READ COMMITTED;
    -- an older one cannot see it: 40001).
    IF NOT pg_catalog.pg_try_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue)) THEN
        PERFORM pg_catalog.pg_advisory_xact_lock_shared(1952605797, pg_catalog.hashtext(claim.queue));
        IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'queue % was given a limit while this transaction waited; retry the transaction', claim.queue
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;

    -- Queue control. A queue without a row in taskboard.queues is unpaused
    -- and unlimited: one primary-key probe, no lock.
    SELECT q.paused, q.max_running, q.max_running_per_key, q.rate_starts
      INTO v_paused, v_limit, v_key_limit, v_rate_starts
      FROM taskboard.queues AS q
     WHERE q.queue = claim.queue;
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL
       AND pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        -- A snapshot taken before a first limit committed does not see it,
        -- and this claim did not wait for it. Writing the queue's row (an
        -- unpaused, unlimited one when there is none) makes PostgreSQL
        -- raise 40001 when the row was written since the snapshot.
        INSERT INTO taskboard.queues AS q (queue) VALUES (claim.queue)
        ON CONFLICT ON CONSTRAINT queues_pkey DO NOTHING;
    END IF;
    IF v_limit IS NOT NULL OR v_key_limit IS NOT NULL OR v_rate_starts IS NOT NULL THEN
        -- Claimers of a limited queue take turns on its row, held until the
        -- caller's transaction ends: the counts below see every claim made
        -- before, so together they never pass the limit. Each writes the
        -- row (the same values) rather than only locking it: in REPEATABLE
        -- READ or SERIALIZABLE the snapshot was taken before the wait and
        -- would miss the claim it waited for, and a row updated since the
        -- snapshot makes PostgreSQL raise 40001 instead.
        UPDATE taskboard.queues AS q
           SET paused = q.paused
         WHERE q.queue = claim.queue
        RETURNING q.paused, q.max_running, q.max_running_per_key, q.rate_starts, q.rate_per, q.rate_by_key
             INTO v_paused, v_limit, v_key_limit, v_rate_starts, v_rate_per, v_rate_by_key;
        -- The clock is read again after the turn: the starts of the claims
        -- that came before are then all earlier than it, so a window ending
        -- at it counts them (a clock read before the wait would not).
        v_now := pg_catalog.clock_timestamp();
    END IF;
    IF v_paused THEN
        RETURN;
    END IF;

    -- The common path: no limit, and no lease of the queue expired by v_now
    -- (nothing to bury or reclaim; the check walks this queue's running
    -- jobs, as the pickers would). Only queued jobs can be taken, and
    -- nothing is recorded in the history: two steps, the queued head
    -- locked and the grant.
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL AND NOT EXISTS (
        SELECT
          FROM taskboard.jobs AS x
         WHERE x.queue = claim.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= v_now) THEN
        RETURN QUERY
        WITH chosen AS MATERIALIZED (
            SELECT o.id, o.run_at
              FROM taskboard.jobs AS o
             WHERE o.queue = claim.queue
               AND o.state = 'queued'
               AND o.run_at <= v_now
             ORDER BY o.priority DESC, o.run_at, o.id
             LIMIT claim.batch
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        granted AS (
            UPDATE taskboard.jobs AS j
               SET state = 'running',
                   lease_token = pg_catalog.gen_random_uuid(),
                   lease_expires_at = v_now + claim.lease,
                   attempt = j.attempt + 1,
                   fence = j.fence + 1,
                   started_at = v_now,
                   claimed_by = claim.worker
             WHERE j.id = ANY (ARRAY(SELECT c.id FROM chosen AS c))
               AND j.state = 'queued'
            RETURNING j.id, j.lease_token, j.task, j.payload, j.attempt, j.lease_expires_at,
                      j.idempotency_key, j.fence, j.trace_context, j.priority, j.run_at
        )
        SELECT g.id, g.lease_token, g.task, g.payload, g.attempt, g.lease_expires_at, g.idempotency_key,
               g.fence, g.trace_context, v_now - g.run_at
          FROM granted AS g
         ORDER BY g.priority DESC, g.run_at, g.id;
        RETURN;
    END IF;

    IF v_rate_starts IS NOT NULL THEN
        -- Starts older than the window count no more.
        DELETE FROM taskboard.queue_starts AS s
         WHERE s.queue = claim.queue
           AND s.started_at <= v_now - v_rate_per;
    END IF;
    PERFORM taskboard.bury_spent(claim.queue, v_now);

    -- Per key (a key limit, a rate per key), the keys of the jobs a round
    -- starts may fill: a claim short of its batch goes round again, those
    -- keys left out, so that fewer rows than the batch still means nothing
    -- else may start now. Each round but the last starts at least one job,
    -- or is the first and finds a spent lease of a key left (one another
    -- transaction held): the first job or expired lease of each key left
    -- in is within its room. The rounds after the first find no expired
    -- lease left to reclaim but those of keys whose window filled (the
    -- first reclaimed the others, or filled the batch).
    v_keyed := v_key_limit IS NOT NULL OR v_rate_by_key;
    IF v_keyed THEN
        v_frees := EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = claim.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= v_now
               AND x.attempt >= x.max_attempts
               AND x.concurrency_key IS NOT NULL);
    END IF;
    LOOP
        v_room := v_want;
        v_cap := v_want;
        IF v_limit IS NOT NULL THEN
            v_room := LEAST(taskboard.queue_room(claim.queue, v_limit, v_now), v_want);
        END IF;
        IF v_rate_starts IS NOT NULL AND NOT v_rate_by_key THEN
            -- The window's room bounds the round's starts, reclaims
            -- included, and with them the queued jobs it may start.
            v_cap := LEAST(taskboard.window_room(claim.queue, v_rate_starts, v_rate_per, v_now), v_want);
            v_room := LEAST(v_room, v_cap);
        END IF;
        v_full_keys := '{}';
        IF v_key_limit IS NOT NULL THEN
            v_full_keys := taskboard.full_keys(claim.queue, v_key_limit, v_now);
        END IF;
        IF v_rate_by_key THEN
            v_rate_full_keys := taskboard.rate_full_keys(claim.queue, v_now, v_room, v_full_keys, v_rate_full_keys,
                                                         v_rate_starts, v_rate_per);
            v_full_keys := pg_catalog.array_cat(v_full_keys, v_rate_full_keys);
        END IF;

        v_reclaims := taskboard.pick_expired(claim.queue, v_now, v_cap, v_rate_full_keys,
                                             v_rate_starts, v_rate_per, v_rate_by_key);
        IF v_keyed THEN
            v_ids := v_reclaims || taskboard.pick_keyed(claim.queue, v_now, v_room, v_full_keys, v_key_limit,
                                                        v_rate_starts, v_rate_per, v_rate_by_key, v_reclaims);
        ELSE
            v_ids := v_reclaims || taskboard.pick_queued(claim.queue, v_now, v_room);
        END IF;
        RETURN QUERY
        WITH granted AS MATERIALIZED (
            SELECT * FROM taskboard.grant_leases(v_ids, v_cap, claim.worker, claim.lease, v_now)
        ),
        logged AS (
            -- Under a rate limit, each start it counts in the queue's log
            -- (per key, those of jobs with a key).
            INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
            SELECT claim.queue, j.concurrency_key, v_now
              FROM taskboard.jobs AS j
             WHERE v_rate_starts IS NOT NULL
               AND j.id = ANY (ARRAY(SELECT g.job_id FROM granted AS g))
               AND (NOT v_rate_by_key OR j.concurrency_key IS NOT NULL)
        )
        SELECT * FROM granted;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
        v_want := claim.batch - v_taken;
        EXIT WHEN NOT v_keyed OR v_want = 0 OR (v_rows = 0 AND NOT v_frees);
        v_frees := false;
    END LOOP;
END
$function$;

