-- claim(queue, worker, batch, lease) -> setof taskboard.claimed
-- Takes up to `batch` runnable jobs of `queue`: queued with run_at due, or
-- running with an expired lease, in order of priority (higher first), run_at,
-- then id. Each claimed job gets a fresh lease token, lease_expires_at =
-- clock + lease, attempt + 1, fence + 1, started_at = clock and
-- claimed_by = worker; the token is returned here and nowhere else, with
-- the fence (strictly increasing with every claim of the job, releases and
-- reclaims included), with the job's trace_context (the W3C trace
-- context its enqueuer stored, NULL when none), and, last, waited: how long
-- the job had been runnable (clock minus its run_at, or minus the expired
-- lease's deadline for a reclaim). A reclaim records the lease it took
-- over (holder, attempt, fence, deadline) in the job's history
-- (taskboard.job_history), its actor the role in force (the one SET ROLE
-- chose, else the login) and worker beside it. Concurrent claimers
-- never receive the same job (FOR NO KEY UPDATE SKIP LOCKED, the lock its
-- update takes: a job on which another transaction holds FOR KEY SHARE, as
-- a foreign key's check does, is claimed without waiting for it, and then
-- renewed and completed as any other). An expired job that has used up its attempts
-- becomes dead (error 'lease expired') in the same call, is not returned and
-- does not count against `batch`; the jobs waiting on it are settled as
-- fail settles them. Fewer rows than `batch` means nothing else
-- is runnable for this caller now. Up to `batch` rows it looked at but did
-- not take stay locked, and
-- skipped by other claimers, until the caller's transaction ends: claim in
-- a transaction of its own.
-- A paused queue (taskboard.pause) hands out nothing. A limited one
-- (taskboard.set_queue_limit) starts queued jobs only while fewer than
-- max_running of its jobs are running or held by a cancelled lease not yet
-- ended (taskboard.cancel), however many workers claim at once;
-- in REPEATABLE READ or SERIALIZABLE a claim of a limited queue that raced
-- another one raises 40001 (serialization_failure) rather than count without it.
-- A first limit counts the claims still in flight: a claim waits while one
-- is being set for its queue (and then, in REPEATABLE READ or SERIALIZABLE,
-- raises 40001), and set_queue_limit waits for the claim transactions of
-- the queue still open; in those levels a claim whose snapshot predates a
-- first limit raises 40001 too (it writes the queue's row to find out: an
-- unpaused, unlimited row when there was none).
-- A queue with a key limit (taskboard.set_key_limit) starts no job whose
-- concurrency key already has max_running_per_key jobs holding a lease
-- (running, an expired lease until its job is reclaimed or finished, a
-- cancelled job until its lease ends), however many workers claim at once,
-- and still takes the jobs of other keys, and those without a key, behind a
-- full key: a round reads the queued jobs of keys with room, sixteen times
-- its room of them in order, and starts each key's first ones up to the
-- key's room; a claim still short of its batch goes round again while its
-- last round started a job. Its claimers take turns as under a queue limit,
-- and a first key limit waits for the claims in flight the same way.
-- A queue with a rate limit (taskboard.set_rate_limit) starts at most
-- rate_starts jobs, reclaims included, in any window of rate_per: its
-- claimers take turns as under a queue limit, each reads the clock (the
-- clock of its leases and of the window) after its turn, counts the starts
-- logged within the window before it (taskboard.queue_starts, whose older
-- rows it deletes) and logs those it makes. With rate_by_key, each key's
-- starts are counted apart (and only those are logged), jobs without a key
-- are not limited, a key whose window is full is left out as a full key is
-- under a key limit (its expired leases too), found among the keys a round
-- reaches, and a key's reclaims take its room before its queued jobs. A
-- round finds the full keys ahead of the jobs it takes by reading the
-- queued jobs in claim order, those of keys found full left out, and
-- counting each key's window once; it reads twice as far again while
-- fewer than sixteen times its room of the jobs read are of keys with room.
-- Its work is linear in the full keys ahead: fewer than eight reads of
-- their queued jobs and one count of each one's window.
-- Raises 22023 when queue or worker is NULL, empty or longer than 200
-- characters, batch is outside 1..1000, or lease is NULL, not positive or
-- longer than 12 hours ('infinity' included), by the deadline it gives:
-- unless clock < clock + lease <= clock + 12 hours, months and days
-- counted as the calendar makes them.
--
-- plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
-- per session, made at the first call and kept until PostgreSQL invalidates
-- it (a change to the table, its indexes or its statistics, a VACUUM);
-- planning this five-CTE statement on every call cost about as much as
-- running it. A worker usually first claims an empty queue, and the plan
-- is then made for an empty table, so each step is written to be bounded
-- whatever the table held: the running jobs of this queue (its partial
-- index), the head of its queued index, and primary-key probes by id; with
-- sequential scans off, no step scans the table (tests/test_claim_plan.py).
-- A queue with no limit and no lease expired by the claim's clock takes the
-- common path: a check of its running jobs, then a statement of two steps
-- (the head of its queued index, locked, and the update); the steps of
-- expired leases, limits and the history run only when there is one.
-- Every claim holds a shared transaction-level advisory lock on its queue,
-- keys (1952605797, hashtext(queue)), until its transaction ends; an
-- application's own advisory locks should not use 1952605797 as first key.
-- Before it claims, a claim in READ COMMITTED works through the rows of
-- taskboard.dependency_checks when there are any (recheck_dependencies):
-- the dependency edges of committed transactions that a dependency's end
-- may not have seen, and ends with dependents left to settle.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
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
    -- The queue's limit per concurrency key, and the keys already at it.
    v_key_limit integer;
    v_full_keys text[] := '{}';
    -- Under a key limit a claim goes round again while it is short of its
    -- batch and its last round started something: rows handed out so far,
    -- how many the next round may hand out, and the last round's rows.
    v_taken integer := 0;
    v_want integer := claim.batch;
    v_rows integer;
    -- Whether the first round buries a spent lease of a key: its key's
    -- place is free for the next round.
    v_frees boolean := false;
    -- The queue's rate limit: at most v_rate_starts starts per v_rate_per,
    -- of the queue or (v_rate_by_key) of each key; the starts a round may
    -- make, reclaims included (v_cap), and the keys whose window is full.
    v_rate_starts integer;
    v_rate_per interval;
    v_rate_by_key boolean := false;
    v_cap integer;
    v_rate_full_keys text[] := '{}';
    -- Under a rate per key, a look for full keys: how many queued jobs it
    -- reads, the keys it found full, the jobs it read and those of them
    -- of keys with room or without a key.
    v_reach bigint;
    v_new_full text[];
    v_read bigint;
    v_open bigint;
    -- Whether claim picks per key: under a key limit or a rate per key.
    v_keyed boolean;
    v_buried bigint[];
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
    PERFORM taskboard.check_interval('lease', claim.lease, interval '12 hours');

    -- Dependency edges written while a dependency could end, and ends with
    -- dependents left to settle, once their transactions have committed: a
    -- few of them per claim, whatever its queue (most claims find none).
    IF EXISTS (SELECT FROM taskboard.dependency_checks) THEN
        PERFORM taskboard.recheck_dependencies();
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
        -- Claimers of a limited queue (a limit of its own or per key) take
        -- turns on its row, held until the caller's transaction ends: the
        -- counts below see every claim made before, so together they never
        -- pass the limit. Reclaiming an
        -- expired job does not add a running one; starting a queued job does.
        -- Each writes the row (the same values) rather than only locking it:
        -- in REPEATABLE READ or SERIALIZABLE the snapshot was taken before
        -- the wait and would miss the claim it waited for, and a row updated
        -- since the snapshot makes PostgreSQL raise 40001 instead.
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
    -- jobs, as the steps below would). Only queued jobs can be taken, and
    -- nothing is recorded in the history.
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL AND NOT EXISTS (
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
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        claimed AS (
            -- By id through an array, and by id only: the rows `queued`
            -- locked, which nothing changes before this update. Joined to
            -- `queued` instead, the plan kept from an empty table walked the
            -- whole primary key; with the queue and the state in this test,
            -- on PostgreSQL 15, the queue's whole queued index.
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
        RETURN;
    END IF;

    IF v_rate_starts IS NOT NULL THEN
        -- Starts older than the window count no more.
        DELETE FROM taskboard.queue_starts AS s
         WHERE s.queue = claim.queue
           AND s.started_at <= v_now - v_rate_per;
    END IF;

    -- Per key (a key limit, a rate per key), the keys of the jobs a round
    -- starts may fill: a claim short of its batch goes round again, those
    -- keys left out, so that fewer rows than the batch still means nothing
    -- else may start now. Each round but the last starts at least one job,
    -- or is the first and buries a spent lease of a key (a key it counted
    -- as a holder): the first job or expired lease of each key left in is
    -- within its room. The rounds after the first find no expired lease
    -- left to reclaim but those of keys whose window filled (the first
    -- reclaimed the others, or filled the batch).
    v_keyed := v_key_limit IS NOT NULL OR v_rate_by_key;
    -- Expired leases with no attempt left are buried first: dead, never
    -- handed out, counted by no limit below; the jobs waiting on them are
    -- settled in this transaction, found from the buried rows themselves
    -- (a dependent enqueued while this claim ran is among them).
    IF EXISTS (
        SELECT
          FROM taskboard.jobs AS x
         WHERE x.queue = claim.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= v_now
           AND x.attempt >= x.max_attempts) THEN
        WITH doomed AS MATERIALIZED (
            -- Locked once per call: an IN (subquery ... FOR NO KEY UPDATE) was
            -- planned to rerun per running row.
            SELECT x.id
              FROM taskboard.jobs AS x
             WHERE x.queue = claim.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= v_now
               AND x.attempt >= x.max_attempts
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        buried AS (
            -- Found by id among this queue's running jobs: a plan made while
            -- the table was empty walks the running jobs' index, and without
            -- the queue it would walk every queue's.
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
            RETURNING j.id
        )
        SELECT ARRAY(SELECT b.id FROM buried AS b) INTO v_buried;
        -- Their dependents, read in a statement of its own with the rows
        -- locked: this snapshot shows every edge committed before the locks.
        v_buried := ARRAY(SELECT b.id FROM pg_catalog.unnest(v_buried) AS b(id)
                           WHERE EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = b.id)
                              OR pg_catalog.current_setting('transaction_isolation') <> 'read committed');
        IF pg_catalog.cardinality(v_buried) > 0 THEN
            PERFORM taskboard.settle_dependents(v_buried);
        END IF;
    END IF;
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
        IF v_limit IS NOT NULL THEN
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
            v_room := LEAST(v_room, v_want);
        END IF;
        v_cap := v_want;
        v_full_keys := '{}';
        IF v_rate_starts IS NOT NULL AND NOT v_rate_by_key THEN
            -- The window's room bounds the round's starts, reclaims
            -- included, and with them the queued jobs it may start.
            SELECT GREATEST(0, v_rate_starts - pg_catalog.count(*))::integer INTO v_cap
              FROM taskboard.queue_starts AS s
             WHERE s.queue = claim.queue
               AND s.started_at > v_now - v_rate_per;
            v_cap := LEAST(v_cap, v_want);
            v_room := LEAST(v_room, v_cap);
        END IF;
        IF v_key_limit IS NOT NULL THEN
            -- The keys whose holders fill the key limit: their running jobs
            -- (an expired lease counts until the job is reclaimed or finished)
            -- and their jobs cancelled under a lease not yet ended. No queued
            -- job of theirs is looked at; the others' are.
            SELECT COALESCE(pg_catalog.array_agg(k.concurrency_key), '{}') INTO v_full_keys
              FROM (SELECT h.concurrency_key
                      FROM taskboard.jobs AS h
                     WHERE h.queue = claim.queue
                       AND h.concurrency_key IS NOT NULL
                       AND (h.state = 'running' OR h.held_until > v_now)
                     GROUP BY h.concurrency_key
                    HAVING pg_catalog.count(*) >= v_key_limit) AS k;
        END IF;
        IF v_rate_by_key THEN
            -- The keys whose window is full (none of their jobs starts, an
            -- expired lease of theirs is not reclaimed), among those this
            -- round would look at: the keys of the first queued jobs it
            -- reads, as `keyed` reads them, and of the expired leases it may
            -- reclaim, each key's window counted through its index (at most
            -- rate_starts of its starts). A look reads the first v_reach
            -- queued jobs in claim order, those of the keys found full so far
            -- left out (a hashed set: read past, not counted again), and
            -- counts the windows of their keys once each. While fewer than
            -- sixteen times the room of the jobs it read are of keys with room
            -- (or of none), and the queue has more, it looks again twice as
            -- far: the jobs of keys with room behind full ones are still
            -- reached, no key's window is counted that this claim does not
            -- reach, and however many full keys are ahead, the looks together
            -- read fewer than eight times the queued jobs up to the last one
            -- `keyed` takes (each look at most twice as many as it reaches,
            -- the last less than twice as far as needed).
            v_reach := 16 * v_room;
            LOOP
                WITH reached AS MATERIALIZED (
                    SELECT j.concurrency_key AS ck
                      FROM taskboard.jobs AS j
                     WHERE j.queue = claim.queue
                       AND j.state = 'queued'
                       AND j.run_at <= v_now
                       AND (j.concurrency_key IS NULL
                            OR j.concurrency_key NOT IN (
                                SELECT f.key
                                  FROM pg_catalog.unnest(pg_catalog.array_cat(v_full_keys, v_rate_full_keys)) AS f(key)))
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT v_reach
                ),
                filled AS MATERIALIZED (
                    SELECT c.ck
                      FROM (SELECT r.ck
                              FROM reached AS r
                             WHERE r.ck IS NOT NULL
                            UNION
                            SELECT x.concurrency_key
                              FROM taskboard.jobs AS x
                             WHERE x.queue = claim.queue
                               AND x.state = 'running'
                               AND x.lease_expires_at <= v_now
                               AND x.attempt < x.max_attempts
                               AND x.concurrency_key IS NOT NULL
                               AND x.concurrency_key NOT IN (
                                   SELECT f.key FROM pg_catalog.unnest(v_rate_full_keys) AS f(key))) AS c
                     WHERE (SELECT pg_catalog.count(*)
                              FROM (SELECT
                                      FROM taskboard.queue_starts AS s
                                     WHERE s.queue = claim.queue
                                       AND s.concurrency_key = c.ck
                                       AND s.started_at > v_now - v_rate_per
                                     LIMIT v_rate_starts) AS w) >= v_rate_starts
                )
                SELECT ARRAY(SELECT f.ck FROM filled AS f),
                       (SELECT pg_catalog.count(*) FROM reached AS r),
                       (SELECT pg_catalog.count(*)
                          FROM reached AS r
                         WHERE r.ck IS NULL
                            OR r.ck NOT IN (SELECT f.ck FROM filled AS f))
                  INTO v_new_full, v_read, v_open;
                v_rate_full_keys := pg_catalog.array_cat(v_rate_full_keys, v_new_full);
                EXIT WHEN v_open >= 16 * v_room OR v_read < v_reach;
                v_reach := 2 * v_reach;
            END LOOP;
            v_full_keys := pg_catalog.array_cat(v_full_keys, v_rate_full_keys);
        END IF;
        RETURN QUERY
        WITH expired AS MATERIALIZED (
            -- Reclaimable: the few running jobs of the queue whose lease ran out.
            -- Under a rate per key, not those of keys whose window is full.
            SELECT j.id, j.priority, j.run_at, j.lease_expires_at AS due_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.queue = claim.queue
               AND j.state = 'running'
               AND j.lease_expires_at <= v_now
               AND j.attempt < j.max_attempts
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (SELECT f.key FROM pg_catalog.unnest(v_rate_full_keys) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT v_cap
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        queued AS MATERIALIZED (
            -- Without a key limit or a rate per key: the queued head, locked.
            SELECT j.id, j.priority, j.run_at, j.run_at AS due_at
              FROM taskboard.jobs AS j
             WHERE NOT v_keyed
               AND j.queue = claim.queue
               AND j.state = 'queued'
               AND j.run_at <= v_now
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT v_room
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        keyed AS MATERIALIZED (
            -- Per key (a key limit, a rate per key): the queued jobs of keys with room and those
            -- without a key, sixteen times the room of them in claim order,
            -- read without a lock (the queue's claimers take turns on its
            -- row; the rows taken are locked below), so that the jobs of
            -- keys with room behind many of one key are still found.
            SELECT j.id, j.priority, j.run_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE v_keyed
               AND j.queue = claim.queue
               AND j.state = 'queued'
               AND j.run_at <= v_now
               -- A hashed set: the queued jobs of full keys are read past
               -- (a key with a long backlog has many), each looked up once.
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (SELECT f.key FROM pg_catalog.unnest(v_full_keys) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT 16 * v_room
        ),
        rooms AS MATERIALIZED (
            -- Under a rate per key: the starts left in the window of each
            -- key of the round, counted once per key.
            SELECT r.ck, v_rate_starts - (
                       SELECT pg_catalog.count(*)
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = claim.queue
                          AND s.concurrency_key = r.ck
                          AND s.started_at > v_now - v_rate_per) AS room
              FROM (SELECT e.ck FROM expired AS e UNION SELECT k.ck FROM keyed AS k) AS r
             WHERE v_rate_by_key
               AND r.ck IS NOT NULL
        ),
        reclaims AS MATERIALIZED (
            -- The expired leases to take over: under a rate per key, a key's
            -- first ones in claim order up to its room.
            SELECT n.id, n.priority, n.run_at, n.due_at, n.ck
              FROM (SELECT e.id, e.priority, e.run_at, e.due_at, e.ck,
                           pg_catalog.row_number() OVER (PARTITION BY e.ck ORDER BY e.priority DESC, e.run_at, e.id) AS nth
                      FROM expired AS e) AS n
             WHERE NOT v_rate_by_key
                OR n.ck IS NULL
                OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck)
        ),
        picked AS MATERIALIZED (
            -- A key's jobs in claim order up to its room: the limit less its
            -- holders (as counted for v_full_keys), and under a rate per key
            -- the room of its window less its reclaims.
            SELECT n.id
              FROM (SELECT k.id, k.priority, k.run_at, k.ck,
                           pg_catalog.row_number() OVER (PARTITION BY k.ck ORDER BY k.priority DESC, k.run_at, k.id) AS nth
                      FROM keyed AS k) AS n
             WHERE n.ck IS NULL
                OR ((v_key_limit IS NULL
                     OR n.nth <= v_key_limit - (
                            SELECT pg_catalog.count(*)
                              FROM taskboard.jobs AS h
                             WHERE h.queue = claim.queue
                               AND h.concurrency_key = n.ck
                               AND (h.state = 'running' OR h.held_until > v_now)))
                    AND (NOT v_rate_by_key
                         OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck) - (
                                SELECT pg_catalog.count(*) FROM reclaims AS c WHERE c.ck = n.ck)))
             ORDER BY n.priority DESC, n.run_at, n.id
             LIMIT v_room
        ),
        keyed_locked AS MATERIALIZED (
            -- The picked rows, locked; one locked elsewhere is skipped. Found
            -- by id alone: with the queue or the state in this test, the plan
            -- kept from an empty table walked the queue's whole queued index
            -- on PostgreSQL 15. The locked row is the newest version: `chosen`
            -- takes it only while it is still queued (a cancel may have come
            -- first).
            SELECT j.id, j.priority, j.run_at, j.run_at AS due_at, j.state
              FROM taskboard.jobs AS j
             WHERE j.id = ANY (ARRAY(SELECT p.id FROM picked AS p))
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        chosen AS (
            SELECT c.id, c.due_at
              FROM (SELECT e.id, e.priority, e.run_at, e.due_at FROM reclaims AS e
                    UNION ALL
                    SELECT q.id, q.priority, q.run_at, q.due_at FROM queued AS q
                    UNION ALL
                    SELECT l.id, l.priority, l.run_at, l.due_at FROM keyed_locked AS l
                     WHERE l.state = 'queued') AS c
             ORDER BY c.priority DESC, c.run_at, c.id
             LIMIT v_cap
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
                      j.priority, j.run_at, j.concurrency_key AS ck
        ),
        logged AS (
            -- Under a rate limit, each start it counts in the queue's log
            -- (per key, those of jobs with a key).
            INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
            SELECT claim.queue, c.ck, v_now
              FROM claimed AS c
             WHERE v_rate_starts IS NOT NULL
               AND (NOT v_rate_by_key OR c.ck IS NOT NULL)
        ),
        reclaimed AS (
            -- The lease each reclaim took over, as a line of the job's history:
            -- its actor is the role in force (the one SET ROLE chose, else the
            -- login), and actor_worker the worker name this claim stated.
            -- The statement's snapshot still shows the row as it was before
            -- `claimed`. A claim that reclaims nothing finds no id and writes
            -- nothing.
            INSERT INTO taskboard.job_events
                   (job_id, kind, at, worker, actor, actor_worker, attempt, fence, lease_expires_at,
                    token_digest)
            SELECT o.id, 'reclaimed', v_now, o.claimed_by,
                   CASE pg_catalog.current_setting('role')
                       WHEN 'none' THEN pg_catalog.session_user()::text
                       ELSE pg_catalog.current_setting('role')
                   END,
                   claim.worker, o.attempt, o.fence,
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
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
        v_want := claim.batch - v_taken;
        EXIT WHEN NOT v_keyed OR v_want = 0 OR (v_rows = 0 AND NOT v_frees);
        v_frees := false;
    END LOOP;

END
$function$;

REVOKE ALL ON FUNCTION taskboard.claim(text,text,integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.claim(text,text,integer,interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.claim(text,text,integer,interval) TO taskboard_admin;
