-- Revert taskboard:version from pg
--
-- Release 0.6.3: written by `make schema` (never by hand). A revert stops at
-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds
-- data, unless the Sqitch variable drop_data is yes; then release 0.6.2's
-- functions come back.

\if :{?drop_data}
\else
\set drop_data no
\endif

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

SET LOCAL taskboard.drop_data TO :'drop_data';

DO $guard$
DECLARE
    v_lost text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s rows, added in %s)', l.data, l.rows, l.added_in), ', ')
      INTO v_lost
      FROM taskboard.revert_losses('0.1.0') AS l;
    IF v_lost IS NOT NULL AND pg_catalog.current_setting('taskboard.drop_data') <> 'yes' THEN
        RAISE EXCEPTION 'a revert to a release before 0.6.3 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

-- taskboard.bury_spent, no more
DROP FUNCTION taskboard.bury_spent(text,timestamp with time zone);

-- taskboard.check_arg, no more
DROP FUNCTION taskboard.check_arg(boolean,text);

-- taskboard.check_between, no more
DROP FUNCTION taskboard.check_between(text,bigint,bigint,bigint);

-- taskboard.check_choice, no more
DROP FUNCTION taskboard.check_choice(text,text,text[]);

-- taskboard.check_delay, no more
DROP FUNCTION taskboard.check_delay(text,interval,text,boolean);

-- taskboard.check_flat, no more
DROP FUNCTION taskboard.check_flat(text,integer[]);

-- taskboard.check_given, no more
DROP FUNCTION taskboard.check_given(text,anyelement,text);

-- taskboard.check_items, no more
DROP FUNCTION taskboard.check_items(text,anyarray);

-- taskboard.check_key, no more
DROP FUNCTION taskboard.check_key(text,text,integer,text);

-- taskboard.check_lease, no more
DROP FUNCTION taskboard.check_lease(bigint,uuid);

-- taskboard.check_leases, no more
DROP FUNCTION taskboard.check_leases(text,bigint[],uuid[],integer);

-- taskboard.check_lengths, no more
DROP FUNCTION taskboard.check_lengths(text,integer,text,integer);

-- taskboard.check_limit, no more
DROP FUNCTION taskboard.check_limit(text,integer,integer,text);

-- taskboard.check_recent, no more
DROP FUNCTION taskboard.check_recent(interval);

-- taskboard.check_trace_context, no more
DROP FUNCTION taskboard.check_trace_context(jsonb);

-- taskboard.find_ids, no more
DROP FUNCTION taskboard.find_ids(text,text,text,bigint,integer);

-- taskboard.full_keys, no more
DROP FUNCTION taskboard.full_keys(text,integer,timestamp with time zone);

-- taskboard.grant_leases, no more
DROP FUNCTION taskboard.grant_leases(bigint[],integer,text,interval,timestamp with time zone);

-- taskboard.pick_expired, no more
DROP FUNCTION taskboard.pick_expired(text,timestamp with time zone,integer,text[],integer,interval,boolean);

-- taskboard.pick_keyed, no more
DROP FUNCTION taskboard.pick_keyed(text,timestamp with time zone,integer,text[],integer,integer,interval,boolean,bigint[]);

-- taskboard.pick_queued, no more
DROP FUNCTION taskboard.pick_queued(text,timestamp with time zone,integer);

-- taskboard.queue_room, no more
DROP FUNCTION taskboard.queue_room(text,integer,timestamp with time zone);

-- taskboard.rate_full_keys, no more
DROP FUNCTION taskboard.rate_full_keys(text,timestamp with time zone,integer,text[],text[],integer,interval);

-- taskboard.set_limit, no more
DROP FUNCTION taskboard.set_limit(text,text,integer);

-- taskboard.window_room, no more
DROP FUNCTION taskboard.window_room(text,integer,interval,timestamp with time zone);

-- taskboard.cancel
CREATE OR REPLACE FUNCTION taskboard.cancel(job_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF cancel.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The history line, from the row as it is before the cancel (locked
    -- here, so the UPDATE below changes the row this line describes).
    INSERT INTO taskboard.job_events
           (job_id, kind, actor, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT j.id, 'cancelled',
           -- The role in force: the one SET ROLE chose, else the login.
           CASE pg_catalog.current_setting('role')
               WHEN 'none' THEN pg_catalog.session_user()::text
               ELSE pg_catalog.current_setting('role')
           END,
           CASE WHEN j.state = 'running' THEN j.claimed_by END,
           CASE WHEN j.state = 'running' THEN j.attempt END,
           CASE WHEN j.state = 'running' THEN j.fence END,
           CASE WHEN j.state = 'running' THEN j.lease_expires_at END,
           CASE WHEN j.state = 'running' THEN pg_catalog.sha256(pg_catalog.uuid_send(j.lease_token)) END
      FROM taskboard.jobs AS j
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running')
       -- The lock the UPDATE below takes anyway: a FOR KEY SHARE held by
       -- an open enqueue that depends on the job does not hold it up.
       FOR NO KEY UPDATE;

    UPDATE taskboard.jobs AS j
       SET state = 'cancelled',
           finished_at = v_now,
           -- The holder of a live lease may act until its deadline.
           held_until = CASE WHEN j.state = 'running' AND j.lease_expires_at > v_now
                             THEN j.lease_expires_at
                             ELSE j.held_until
                        END
     WHERE j.id = cancel.job_id
       AND j.state IN ('waiting', 'queued', 'running');
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Its dependents, read in a statement of their own with the row locked:
    -- this snapshot shows every edge committed before the lock (the
    -- UPDATE's may predate a wait for it).
    IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = cancel.job_id)
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM taskboard.settle_dependents(ARRAY[cancel.job_id]);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.cancel(bigint) IS
$comment$cancel(job_id) -> boolean
An administrator stops a job: waiting, queued or running becomes
cancelled with finished_at. The jobs waiting on it are cancelled after it
(with the error 'dependency N ended cancelled'), but for those enqueued
with on_dependency_failure 'run', which count it as ended and are due no
sooner than its held_until (below); a job with very many dependents has
1000 of them settled in this call and the rest soon after, by later
claims. A holder's token stops being current, so its later renew,
complete, fail and release answer NULL/false. A running job whose lease
has not ended keeps, until that lease's deadline (held_until), its place
under its queue's limit and its dedupe key: the holder may believe it
holds the job until then, so no other job takes its place, a job enqueued
with its key meanwhile is due no sooner, and a retry of it neither.
The cancel is a line of the job's history (taskboard.job_history), naming
the holder of a running job, and as its actor the role in force (the one
SET ROLE chose, else the login).
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.cancel(bigint) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint) TO :"admin_role";

-- taskboard.claim
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

COMMENT ON FUNCTION taskboard.claim(text,text,integer,interval) IS
$comment$claim(queue, worker, batch, lease) -> setof taskboard.claimed
Takes up to `batch` runnable jobs of `queue`: queued with run_at due, or
running with an expired lease, in order of priority (higher first), run_at,
then id. Each claimed job gets a fresh lease token, lease_expires_at =
clock + lease, attempt + 1, fence + 1, started_at = clock and
claimed_by = worker; the token is returned here and nowhere else, with
the fence (strictly increasing with every claim of the job, releases and
reclaims included), with the job's trace_context (the W3C trace
context its enqueuer stored, NULL when none), and, last, waited: how long
the job had been runnable (clock minus its run_at, or minus the expired
lease's deadline for a reclaim). A reclaim records the lease it took
over (holder, attempt, fence, deadline) in the job's history
(taskboard.job_history), its actor the role in force (the one SET ROLE
chose, else the login) and worker beside it. Concurrent claimers
never receive the same job (FOR NO KEY UPDATE SKIP LOCKED, the lock its
update takes: a job on which another transaction holds FOR KEY SHARE, as
a foreign key's check does, is claimed without waiting for it, and then
renewed and completed as any other). An expired job that has used up its attempts
becomes dead (error 'lease expired') in the same call, is not returned and
does not count against `batch`; the jobs waiting on it are settled as
fail settles them. Fewer rows than `batch` means nothing else
is runnable for this caller now. Up to `batch` rows it looked at but did
not take stay locked, and
skipped by other claimers, until the caller's transaction ends: claim in
a transaction of its own.
A paused queue (taskboard.pause) hands out nothing. A limited one
(taskboard.set_queue_limit) starts queued jobs only while fewer than
max_running of its jobs are running or held by a cancelled lease not yet
ended (taskboard.cancel), however many workers claim at once;
in REPEATABLE READ or SERIALIZABLE a claim of a limited queue that raced
another one raises 40001 (serialization_failure) rather than count without it.
A first limit counts the claims still in flight: a claim waits while one
is being set for its queue (and then, in REPEATABLE READ or SERIALIZABLE,
raises 40001), and set_queue_limit waits for the claim transactions of
the queue still open; in those levels a claim whose snapshot predates a
first limit raises 40001 too (it writes the queue's row to find out: an
unpaused, unlimited row when there was none).
A queue with a key limit (taskboard.set_key_limit) starts no job whose
concurrency key already has max_running_per_key jobs holding a lease
(running, an expired lease until its job is reclaimed or finished, a
cancelled job until its lease ends), however many workers claim at once,
and still takes the jobs of other keys, and those without a key, behind a
full key: a round reads the queued jobs of keys with room, sixteen times
its room of them in order, and starts each key's first ones up to the
key's room; a claim still short of its batch goes round again while its
last round started a job. Its claimers take turns as under a queue limit,
and a first key limit waits for the claims in flight the same way.
A queue with a rate limit (taskboard.set_rate_limit) starts at most
rate_starts jobs, reclaims included, in any window of rate_per: its
claimers take turns as under a queue limit, each reads the clock (the
clock of its leases and of the window) after its turn, counts the starts
logged within the window before it (taskboard.queue_starts, whose older
rows it deletes) and logs those it makes. With rate_by_key, each key's
starts are counted apart (and only those are logged), jobs without a key
are not limited, a key whose window is full is left out as a full key is
under a key limit (its expired leases too), found among the keys a round
reaches, and a key's reclaims take its room before its queued jobs. A
round finds the full keys ahead of the jobs it takes by reading the
queued jobs in claim order, those of keys found full left out, and
counting each key's window once; it reads twice as far again while
fewer than sixteen times its room of the jobs read are of keys with room.
Its work is linear in the full keys ahead: fewer than eight reads of
their queued jobs and one count of each one's window.
Raises 22023 when queue or worker is NULL, empty or longer than 200
characters, batch is outside 1..1000, or lease is NULL, not positive or
longer than 12 hours ('infinity' included), by the deadline it gives:
unless clock < clock + lease <= clock + 12 hours, months and days
counted as the calendar makes them.

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it (a change to the table, its indexes or its statistics, a VACUUM);
planning this five-CTE statement on every call cost about as much as
running it. A worker usually first claims an empty queue, and the plan
is then made for an empty table, so each step is written to be bounded
whatever the table held: the running jobs of this queue (its partial
index), the head of its queued index, and primary-key probes by id; with
sequential scans off, no step scans the table (tests/test_claim_plan.py).
A queue with no limit and no lease expired by the claim's clock takes the
common path: a check of its running jobs, then a statement of two steps
(the head of its queued index, locked, and the update); the steps of
expired leases, limits and the history run only when there is one.
Every claim holds a shared transaction-level advisory lock on its queue,
keys (1952605797, hashtext(queue)), until its transaction ends; an
application's own advisory locks should not use 1952605797 as first key.
Before it claims, a claim in READ COMMITTED works through the rows of
taskboard.dependency_checks when there are any (recheck_dependencies):
the dependency edges of committed transactions that a dependency's end
may not have seen, and ends with dependents left to settle.$comment$;

REVOKE ALL ON FUNCTION taskboard.claim(text,text,integer,interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.claim(text,text,integer,interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.claim(text,text,integer,interval) TO :"admin_role";

-- taskboard.complete
CREATE OR REPLACE FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
    IF complete.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF complete.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN (SELECT c.completed
              FROM taskboard.complete_many(ARRAY[complete.job_id], ARRAY[complete.token],
                                           ARRAY[complete.result]) AS c);
END
$function$;

COMMENT ON FUNCTION taskboard.complete(bigint,uuid,jsonb) IS
$comment$complete(job_id, token, result) -> boolean
Marks the job succeeded with `result` and finished_at when `token` is the
current lease token, even if its lease expired, as long as nobody
reclaimed the job.
true:  the job is succeeded by this token; repeating the call with the
       same token after that success returns true again and changes nothing.
false: the token is not current (reclaimed, failed, released, cancelled,
       or never issued); the job does not change. Writes the caller made in the
       same transaction must then be rolled back by the caller.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job's history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller's transaction: a caller that rolls back keeps none.
An accepted completion settles, in the same transaction, the jobs waiting
on this one (taskboard.enqueue's depends_on): the last dependency of one
done makes it queued. A refused completion settles nothing.
Raises 22023 when job_id or token is NULL.

complete_many of one job: the same update, answer and history line.$comment$;

REVOKE ALL ON FUNCTION taskboard.complete(bigint,uuid,jsonb) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO :"admin_role";

-- taskboard.complete_many
CREATE OR REPLACE FUNCTION taskboard.complete_many(job_ids bigint[], tokens uuid[], results jsonb[] DEFAULT NULL::jsonb[])
 RETURNS TABLE(job_id bigint, completed boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The job a completion of one job completed.
    v_one bigint;
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_completed boolean[];
BEGIN
    IF complete_many.job_ids IS NULL THEN
        RAISE EXCEPTION 'job_ids must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF complete_many.tokens IS NULL THEN
        RAISE EXCEPTION 'tokens must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(complete_many.job_ids) > 1
       OR pg_catalog.array_ndims(complete_many.tokens) > 1
       OR pg_catalog.array_ndims(complete_many.results) > 1 THEN
        RAISE EXCEPTION 'job_ids, tokens and results must be one-dimensional arrays'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(complete_many.job_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'job_ids must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(complete_many.tokens, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'tokens must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(complete_many.job_ids) <> pg_catalog.cardinality(complete_many.tokens) THEN
        RAISE EXCEPTION 'job_ids has % elements but tokens has %',
            pg_catalog.cardinality(complete_many.job_ids), pg_catalog.cardinality(complete_many.tokens)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(complete_many.results) <> pg_catalog.cardinality(complete_many.job_ids) THEN
        RAISE EXCEPTION 'results has % elements but job_ids has %',
            pg_catalog.cardinality(complete_many.results), pg_catalog.cardinality(complete_many.job_ids)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- One job, accepted: one update through the primary key (one row, one
    -- lock, no order to keep). Anything else, a refusal included, takes the
    -- statement below, which answers and records it.
    -- Each array's one element is read at its own lower bound, as unnest
    -- below reads it.
    IF pg_catalog.cardinality(complete_many.job_ids) = 1 THEN
        UPDATE taskboard.jobs AS j
           SET state = 'succeeded',
               result = complete_many.results[pg_catalog.array_lower(complete_many.results, 1)],
               finished_at = v_now
         WHERE j.id = complete_many.job_ids[pg_catalog.array_lower(complete_many.job_ids, 1)]
           AND j.state = 'running'
           AND j.lease_token = complete_many.tokens[pg_catalog.array_lower(complete_many.tokens, 1)]
        RETURNING j.id INTO v_one;
        IF FOUND THEN
            -- Its dependents, read in a statement of their own with the row
            -- locked (the UPDATE's snapshot may predate a wait for it).
            IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = v_one)
               OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
                PERFORM taskboard.settle_dependents(ARRAY[v_one]);
            END IF;
            RETURN QUERY SELECT v_one, true;
            RETURN;
        END IF;
    END IF;

    WITH input AS (
        SELECT u.id, u.token, u.result, u.ord
          FROM unnest(complete_many.job_ids, complete_many.tokens, complete_many.results)
               WITH ORDINALITY AS u(id, token, result, ord)
    ),
    locked AS MATERIALIZED (
        -- Every row holding its input token, locked in job_id order: found
        -- through the primary key, the state read from the locked row
        -- rather than asked of the index (with it, the kept plan walked the
        -- running index and compared every running job with every input row).
        -- FOR NO KEY UPDATE, the lock the update takes anyway: a refusal's
        -- FOR KEY SHARE (record_refusals), in this worker's renew_many, does
        -- not wait for it (FOR UPDATE made the two calls deadlock when a
        -- reclaim landed while they waited).
        SELECT j.id, j.state, i.token, i.result
          FROM taskboard.jobs AS j
          JOIN input AS i ON i.id = j.id AND i.token = j.lease_token
         WHERE j.id = ANY (complete_many.job_ids)
         ORDER BY j.id
           FOR NO KEY UPDATE OF j
    ),
    succeeded AS (
        UPDATE taskboard.jobs AS j
           SET state = 'succeeded',
               result = l.result,
               finished_at = v_now
          FROM locked AS l
         WHERE j.id = l.id
           AND l.state = 'running'
           AND j.lease_token = l.token
        RETURNING j.id, j.lease_token
    )
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord),
           pg_catalog.array_agg(
           EXISTS (SELECT FROM succeeded AS s WHERE s.id = i.id AND s.lease_token = i.token)
           OR EXISTS (
               -- The same holder asking again after its own success: read
               -- from the locked row, the newest (a first call that committed
               -- while this one waited for the row included).
               SELECT
                 FROM locked AS l
                WHERE l.id = i.id
                  AND l.token = i.token
                  AND l.state = 'succeeded')
           ORDER BY i.ord)
      INTO v_ids, v_completed
      FROM input AS i;

    -- The refused rows, lines of their jobs' history when their lease was
    -- reclaimed or cancelled; when every row is accepted, nothing is read.
    IF false = ANY (v_completed) THEN
        PERFORM taskboard.record_refusals('refused_complete',
            ARRAY(SELECT u.id FROM unnest(v_ids, v_completed) AS u(id, done)
                   WHERE NOT u.done),
            ARRAY(SELECT u.token FROM unnest(complete_many.tokens, v_completed) AS u(token, done)
                   WHERE NOT u.done));
    END IF;

    RETURN QUERY SELECT u.id, u.done FROM unnest(v_ids, v_completed) AS u(id, done);

    -- The dependents of the jobs this call completed (finished now by it),
    -- found through the edges: none, for most batches.
    IF EXISTS (SELECT FROM taskboard.job_dependencies AS d
                WHERE d.depends_on = ANY (complete_many.job_ids))
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM taskboard.settle_dependents(ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.id = ANY (complete_many.job_ids)
               AND j.state = 'succeeded'
               AND j.finished_at = v_now));
    END IF;
END
$function$;

COMMENT ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) IS
$comment$complete_many(job_ids, tokens, results) -> setof (job_id, completed)
complete for many jobs in one statement: job_ids[i] is completed with
tokens[i] and results[i] (results NULL: every result is NULL). Each row is
fenced on its own token and answered on its own, in input order:
completed is true when that job is succeeded by that token (now or by an
earlier call), false when the token is not current; a refused job changes
nothing. The rows holding their given tokens are locked in job_id order,
as renew_many locks them.
Each accepted completion settles the jobs waiting on its job in the same
transaction, as complete does.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job's history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller's transaction: a caller that rolls back keeps none.
Raises 22023 when job_ids or tokens is NULL or holds a NULL, an array is
multidimensional, or the lengths of job_ids, tokens and (when given)
results differ. A NULL element of results means no result for that job.

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it; planned on every call, planning cost about three times running the
statement for one job. Every step finds its rows by primary key, whatever
the table held when the plan was made.$comment$;

REVOKE ALL ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) TO :"admin_role";

-- taskboard.enqueue
CREATE OR REPLACE FUNCTION taskboard.enqueue(task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_key text DEFAULT NULL::text, trace_context jsonb DEFAULT NULL::jsonb, concurrency_key text DEFAULT NULL::text, depends_on bigint[] DEFAULT NULL::bigint[], on_dependency_failure text DEFAULT 'cancel'::text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    v_now    timestamptz := pg_catalog.clock_timestamp();
    v_run_at timestamptz := coalesce(enqueue.run_at, v_now);
    v_id     bigint;
    v_hash   bytea;
    v_held   text;
    v_held_until timestamptz;
BEGIN
    IF NOT pg_catalog.isfinite(v_run_at) THEN
        RAISE EXCEPTION 'run_at must be a finite time, got %', enqueue.run_at
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_time('run_at', v_run_at);
    PERFORM taskboard.check_name('task', enqueue.task);
    PERFORM taskboard.check_name('queue', enqueue.queue);
    IF enqueue.payload IS NULL THEN
        RAISE EXCEPTION 'payload must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.priority IS NULL THEN
        RAISE EXCEPTION 'priority must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.max_attempts IS NULL OR enqueue.max_attempts < 1 THEN
        RAISE EXCEPTION 'max_attempts must be at least 1, got %', enqueue.max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.dedupe_key = '' THEN
        RAISE EXCEPTION 'dedupe_key must not be empty (NULL means no key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(enqueue.dedupe_key) > 400 THEN
        RAISE EXCEPTION 'dedupe_key must be at most 400 characters, got %', pg_catalog.char_length(enqueue.dedupe_key)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.concurrency_key = '' THEN
        RAISE EXCEPTION 'concurrency_key must not be empty (NULL means no key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.char_length(enqueue.concurrency_key) > 200 THEN
        RAISE EXCEPTION 'concurrency_key must be at most 200 characters, got %',
            pg_catalog.char_length(enqueue.concurrency_key)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.jsonb_typeof(enqueue.trace_context) <> 'object'
       OR EXISTS (SELECT FROM pg_catalog.jsonb_each(enqueue.trace_context) AS e(key, value)
                   WHERE pg_catalog.jsonb_typeof(e.value) <> 'string') THEN
        RAISE EXCEPTION 'trace_context must be a JSON object of strings, got %', enqueue.trace_context
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.octet_length(enqueue.trace_context::text) > 8192 THEN
        RAISE EXCEPTION 'trace_context must be at most 8192 bytes as text, got %',
            pg_catalog.octet_length(enqueue.trace_context::text)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.on_dependency_failure IS NULL OR enqueue.on_dependency_failure NOT IN ('cancel', 'run') THEN
        RAISE EXCEPTION 'on_dependency_failure must be cancel or run, got %',
            coalesce(pg_catalog.quote_literal(enqueue.on_dependency_failure), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.on_dependency_failure = 'run' AND enqueue.depends_on IS NULL THEN
        RAISE EXCEPTION 'on_dependency_failure ''run'' needs depends_on: a job without dependencies has none to fail (pass depends_on, or leave on_dependency_failure out)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- An empty depends_on names no dependency: the job is enqueued as
    -- without one (a dedupe_key allowed).
    IF pg_catalog.cardinality(enqueue.depends_on) > 0 THEN
        RETURN taskboard.enqueue_waiting(enqueue.task, enqueue.payload, enqueue.queue, v_run_at,
                                         enqueue.priority, enqueue.max_attempts, enqueue.dedupe_key,
                                         enqueue.trace_context, enqueue.concurrency_key,
                                         enqueue.depends_on, enqueue.on_dependency_failure);
    END IF;

    -- The index holds the key's SHA-256, not the key (queue, task and key
    -- at their limits are too long for one btree entry): ON CONFLICT names
    -- the index's own expression, and the look-up uses it too, so that it
    -- finds the holder through the index. See deploy/dedupe_scope.sql.
    v_hash := pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(enqueue.dedupe_key, E'\\', E'\\\\'), 'escape'));

    LOOP
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                         trace_context, concurrency_key)
        VALUES (enqueue.queue, enqueue.task, enqueue.payload, enqueue.priority, v_run_at,
                enqueue.max_attempts, enqueue.dedupe_key, enqueue.trace_context, enqueue.concurrency_key)
        ON CONFLICT (queue, task,
                     pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
           WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
           DO NOTHING
        RETURNING j.id INTO v_id;
        EXIT WHEN v_id IS NOT NULL;

        -- An unfinished job of the queue and task holds the key's hash. When
        -- it holds the same key, its id is the answer. A different key with
        -- the same SHA-256 is one key to the unique index, which keeps out
        -- a second unfinished job as long as the first is unfinished: say so
        -- rather than answer with the other key's job. Should the job finish
        -- before this statement sees it, the key is free: insert again.
        SELECT j.id, j.dedupe_key
          INTO v_id, v_held
          FROM taskboard.jobs AS j
         WHERE j.queue = enqueue.queue
           AND j.task = enqueue.task
           AND pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(j.dedupe_key, E'\\', E'\\\\'), 'escape')) = v_hash
           AND j.dedupe_key IS NOT NULL
           AND j.state IN ('queued', 'running');
        IF FOUND THEN
            IF v_held <> enqueue.dedupe_key THEN
                RAISE EXCEPTION 'dedupe_key has the same SHA-256 as the different key of unfinished job % of this queue and task', v_id
                    USING ERRCODE = 'unique_violation';
            END IF;
            RETURN v_id;
        END IF;
    END LOOP;

    IF enqueue.dedupe_key IS NOT NULL THEN
        -- The key is still held by a job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = enqueue.queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = enqueue.task
           AND c.dedupe_key = enqueue.dedupe_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = v_id;
            v_run_at := v_held_until;
        END IF;
    END IF;

    IF v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue.queue);
    END IF;
    RETURN v_id;
END
$function$;

COMMENT ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) IS
$comment$enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
Inserts a queued job, runnable from run_at (NULL = now), and returns its id.
With concurrency_key, the job counts toward that key's limit in its queue
(taskboard.set_key_limit); NULL: no key.
trace_context (the caller's W3C trace context, e.g. {"traceparent": ...})
is stored with the job and handed to its holder by claim; NULL: none.
With depends_on (job ids of any queue), the job is `waiting` until each of
them has ended: claim never takes it. When the last ends succeeded, the
call that completed it makes the job queued in its own transaction (a
refused completion releases nothing), runnable from run_at or then,
whichever is later. When one ends dead or cancelled, the job is cancelled
with the error 'dependency N ended dead' (or cancelled), and the jobs
waiting on it after it; with on_dependency_failure 'run' that dependency
counts as ended and the job still runs. Dependencies that succeeded
already count as ended; one already dead or cancelled cancels the job at
once (or, with 'run', counts as ended). A job cannot depend on a later
one, so dependencies never form a cycle. An empty depends_on names no
dependency: the job is enqueued as without it, and may have a dedupe_key.
With dedupe_key: when an unfinished (queued or running) job of the same
queue and the same task holds that key, returns that job's id and inserts
nothing. A key is scoped to (queue, task, key): an unfinished job of
another task with the same key is not the same job, and a new one is
inserted. The unique index jobs_unfinished_task_dedupe_key makes this hold
under concurrent callers; in REPEATABLE READ or SERIALIZABLE a race may
raise 40001. A key held by a job cancelled under a live lease (its
held_until, see taskboard.cancel) is no unfinished job's: a new job is
inserted, runnable no sooner than that lease's end.
Sends NOTIFY taskboard, '<queue>' when the new job is runnable now.
Joins the caller's transaction: a rollback takes the job with it.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payload, priority or max_attempts is NULL, max_attempts < 1,
dedupe_key is empty or longer than 400 characters, or run_at is
'infinity' or '-infinity' or outside the years 1 to 9999 (before
0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text, or concurrency_key is empty
or longer than 200 characters, or on_dependency_failure is not cancel or
run, or is 'run' without depends_on (NULL), or depends_on is not
one-dimensional, holds NULL, names more than 100000 jobs or a job that
does not exist, or names a job and comes with a dedupe_key.
Raises 23505 when an unfinished job of the queue and task holds a
different key with the same SHA-256 as dedupe_key (no such pair is known):
the index cannot tell the two apart, and the other job is not the answer.
Calls of the seven-, eight- and nine-argument forms of earlier releases
resolve to this one: the arguments it gained come last, with defaults.$comment$;

REVOKE ALL ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) TO :"admin_role";

-- taskboard.enqueue_many
CREATE OR REPLACE FUNCTION taskboard.enqueue_many(task text, payloads jsonb[], queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_keys text[] DEFAULT NULL::text[], trace_context jsonb DEFAULT NULL::jsonb, concurrency_keys text[] DEFAULT NULL::text[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_run_at   timestamptz := coalesce(enqueue_many.run_at, v_now);
    v_ids      bigint[];
    v_inserted bigint;
    v_id       bigint;
    v_first    integer;
    v_ord      integer;
    v_hash     bytea;
    v_held     text;
BEGIN
    IF NOT pg_catalog.isfinite(v_run_at) THEN
        RAISE EXCEPTION 'run_at must be a finite time, got %', enqueue_many.run_at
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_time('run_at', v_run_at);
    PERFORM taskboard.check_name('task', enqueue_many.task);
    PERFORM taskboard.check_name('queue', enqueue_many.queue);
    IF enqueue_many.payloads IS NULL THEN
        RAISE EXCEPTION 'payloads must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(enqueue_many.payloads) > 1 OR pg_catalog.array_ndims(enqueue_many.dedupe_keys) > 1 THEN
        RAISE EXCEPTION 'payloads and dedupe_keys must be one-dimensional arrays'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(enqueue_many.payloads, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'payloads must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_many.dedupe_keys IS NOT NULL
       AND pg_catalog.cardinality(enqueue_many.dedupe_keys) <> pg_catalog.cardinality(enqueue_many.payloads) THEN
        RAISE EXCEPTION 'dedupe_keys has % elements but payloads has %',
            pg_catalog.cardinality(enqueue_many.dedupe_keys), pg_catalog.cardinality(enqueue_many.payloads)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(enqueue_many.dedupe_keys, '') IS NOT NULL THEN
        RAISE EXCEPTION 'dedupe_keys must not contain an empty string (NULL means no key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.unnest(enqueue_many.dedupe_keys) AS k(key) WHERE pg_catalog.char_length(k.key) > 400) THEN
        RAISE EXCEPTION 'dedupe_keys must hold keys of at most 400 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_many.priority IS NULL THEN
        RAISE EXCEPTION 'priority must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_many.max_attempts IS NULL OR enqueue_many.max_attempts < 1 THEN
        RAISE EXCEPTION 'max_attempts must be at least 1, got %', enqueue_many.max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(enqueue_many.concurrency_keys) > 1 THEN
        RAISE EXCEPTION 'concurrency_keys must be a one-dimensional array'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_many.concurrency_keys IS NOT NULL
       AND pg_catalog.cardinality(enqueue_many.concurrency_keys) <> pg_catalog.cardinality(enqueue_many.payloads) THEN
        RAISE EXCEPTION 'concurrency_keys has % elements but payloads has %',
            pg_catalog.cardinality(enqueue_many.concurrency_keys), pg_catalog.cardinality(enqueue_many.payloads)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.unnest(enqueue_many.concurrency_keys) AS k(key)
                WHERE k.key = '' OR pg_catalog.char_length(k.key) > 200) THEN
        RAISE EXCEPTION 'concurrency_keys must hold keys of 1 to 200 characters (NULL means no key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.jsonb_typeof(enqueue_many.trace_context) <> 'object'
       OR EXISTS (SELECT FROM pg_catalog.jsonb_each(enqueue_many.trace_context) AS e(key, value)
                   WHERE pg_catalog.jsonb_typeof(e.value) <> 'string') THEN
        RAISE EXCEPTION 'trace_context must be a JSON object of strings, got %', enqueue_many.trace_context
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.octet_length(enqueue_many.trace_context::text) > 8192 THEN
        RAISE EXCEPTION 'trace_context must be at most 8192 bytes as text, got %',
            pg_catalog.octet_length(enqueue_many.trace_context::text)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    IF pg_catalog.cardinality(enqueue_many.payloads) = 0 THEN
        RETURN;
    END IF;
    -- Elements are addressed by position below: count positions from 1.
    IF pg_catalog.array_lower(enqueue_many.payloads, 1) <> 1 THEN
        enqueue_many.payloads := ARRAY(SELECT pg_catalog.unnest(enqueue_many.payloads));
    END IF;
    IF pg_catalog.array_lower(enqueue_many.dedupe_keys, 1) <> 1 THEN
        enqueue_many.dedupe_keys := ARRAY(SELECT pg_catalog.unnest(enqueue_many.dedupe_keys));
    END IF;
    IF pg_catalog.array_lower(enqueue_many.concurrency_keys, 1) <> 1 THEN
        enqueue_many.concurrency_keys := ARRAY(SELECT pg_catalog.unnest(enqueue_many.concurrency_keys));
    END IF;

    IF enqueue_many.dedupe_keys IS NULL THEN
        -- No keys: every element is a new job. Ids are drawn first and
        -- matched to elements by position.
        v_ids := ARRAY(SELECT pg_catalog.nextval('taskboard.jobs_id_seq')
                         FROM pg_catalog.generate_series(1, pg_catalog.cardinality(enqueue_many.payloads)));
        INSERT INTO taskboard.jobs (id, queue, task, payload, priority, run_at, max_attempts, trace_context,
                                    concurrency_key)
        SELECT v_ids[u.ord], enqueue_many.queue, enqueue_many.task, u.payload, enqueue_many.priority,
               v_run_at, enqueue_many.max_attempts, enqueue_many.trace_context,
               enqueue_many.concurrency_keys[u.ord]
          FROM unnest(enqueue_many.payloads) WITH ORDINALITY AS u(payload, ord);
        v_inserted := pg_catalog.cardinality(v_ids);
    ELSE
        -- One statement inserts every job without a key and the first job of
        -- each key. Ids are drawn before the insert so that each element knows
        -- its own; an element whose key an unfinished job already holds keeps
        -- a NULL id here.
        WITH input AS (
            SELECT u.ord, u.payload, u.dedupe_key,
                   u.dedupe_key IS NULL
                   OR pg_catalog.row_number() OVER (PARTITION BY u.dedupe_key ORDER BY u.ord) = 1 AS first_of_key
              FROM unnest(enqueue_many.payloads, enqueue_many.dedupe_keys)
                   WITH ORDINALITY AS u(payload, dedupe_key, ord)
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.payload, i.dedupe_key, i.first_of_key,
                   CASE WHEN i.first_of_key THEN pg_catalog.nextval('taskboard.jobs_id_seq') END AS new_id
              FROM input AS i
        ),
        inserted AS (
            INSERT INTO taskboard.jobs AS j (id, queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                             trace_context, concurrency_key)
            SELECT n.new_id, enqueue_many.queue, enqueue_many.task, n.payload, enqueue_many.priority,
                   v_run_at, enqueue_many.max_attempts, n.dedupe_key, enqueue_many.trace_context,
                   enqueue_many.concurrency_keys[n.ord]
              FROM numbered AS n
             WHERE n.first_of_key
             ORDER BY n.dedupe_key NULLS FIRST, n.ord
            ON CONFLICT (queue, task,
                         pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
               WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
               DO NOTHING
            RETURNING j.id
        )
        SELECT pg_catalog.array_agg(ins.id ORDER BY n.ord),
               pg_catalog.count(ins.id)
          INTO v_ids, v_inserted
          FROM numbered AS n
          LEFT JOIN inserted AS ins ON ins.id = n.new_id;

        -- Elements left without an id carry a key: a later occurrence takes its
        -- first occurrence's id; a first occurrence takes the id of the job that
        -- holds the key, or inserts again if that job finished meanwhile.
        -- In key order, as the insert above: no two calls wait on each other in a cycle.
        -- The holder is found as in enqueue, through the index's expression;
        -- a different key with the same SHA-256 (one key to the index) raises.
        FOR v_ord IN
            SELECT u.ord
              FROM unnest(enqueue_many.dedupe_keys) WITH ORDINALITY AS u(dedupe_key, ord)
             WHERE v_ids[u.ord] IS NULL
             ORDER BY u.dedupe_key, u.ord
        LOOP
            v_first := pg_catalog.array_position(enqueue_many.dedupe_keys, enqueue_many.dedupe_keys[v_ord]);
            IF v_first < v_ord THEN
                v_ids[v_ord] := v_ids[v_first];
                CONTINUE;
            END IF;
            v_hash := pg_catalog.sha256(pg_catalog.decode(
                          pg_catalog.replace(enqueue_many.dedupe_keys[v_ord], E'\\', E'\\\\'), 'escape'));
            LOOP
                SELECT j.id, j.dedupe_key
                  INTO v_id, v_held
                  FROM taskboard.jobs AS j
                 WHERE j.queue = enqueue_many.queue
                   AND j.task = enqueue_many.task
                   AND pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(j.dedupe_key, E'\\', E'\\\\'), 'escape')) = v_hash
                   AND j.dedupe_key IS NOT NULL
                   AND j.state IN ('queued', 'running');
                IF FOUND THEN
                    IF v_held <> enqueue_many.dedupe_keys[v_ord] THEN
                        RAISE EXCEPTION 'dedupe_keys element % (counting from 1) has the same SHA-256 as the different key of unfinished job % of this queue and task',
                            v_ord, v_id
                            USING ERRCODE = 'unique_violation';
                    END IF;
                    EXIT;
                END IF;
                INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts, dedupe_key,
                                                 trace_context, concurrency_key)
                VALUES (enqueue_many.queue, enqueue_many.task, enqueue_many.payloads[v_ord], enqueue_many.priority,
                        v_run_at, enqueue_many.max_attempts, enqueue_many.dedupe_keys[v_ord],
                        enqueue_many.trace_context, enqueue_many.concurrency_keys[v_ord])
                ON CONFLICT (queue, task,
                             pg_catalog.sha256(pg_catalog.decode(pg_catalog.replace(dedupe_key, E'\\', E'\\\\'), 'escape')))
                   WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running')
                   DO NOTHING
                RETURNING j.id INTO v_id;
                IF v_id IS NOT NULL THEN
                    v_inserted := v_inserted + 1;
                    EXIT;
                END IF;
            END LOOP;
            v_ids[v_ord] := v_id;
        END LOOP;
    END IF;

    IF enqueue_many.dedupe_keys IS NOT NULL AND v_inserted > 0 THEN
        -- Keys still held by jobs cancelled under a live lease.
        UPDATE taskboard.jobs AS j
           SET run_at = h.held_until
          FROM (SELECT c.dedupe_key, pg_catalog.max(c.held_until) AS held_until
                  FROM taskboard.jobs AS c
                 WHERE c.queue = enqueue_many.queue
                   AND c.held_until > v_run_at
                   AND c.state = 'cancelled'
                   AND c.task = enqueue_many.task
                   AND c.dedupe_key IS NOT NULL
                 GROUP BY c.dedupe_key) AS h
         WHERE j.id = ANY (v_ids)
           AND j.dedupe_key = h.dedupe_key
           AND j.state = 'queued'
           AND j.run_at < h.held_until;
    END IF;

    IF v_inserted > 0 AND v_run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue_many.queue);
    END IF;

    RETURN QUERY
    SELECT u.id
      FROM pg_catalog.unnest(v_ids) WITH ORDINALITY AS u(id, ord)
     ORDER BY u.ord;
END
$function$;

COMMENT ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) IS
$comment$enqueue_many(task, payloads, queue, run_at, priority, max_attempts, dedupe_keys, trace_context, concurrency_keys) -> setof bigint
concurrency_keys pairs with payloads element by element: each job counts
toward its key's limit in the queue (taskboard.set_key_limit); a NULL
element or a NULL array: no key.
Enqueues one job of `task` per element of `payloads` in one round trip and
returns their ids in payload order. dedupe_keys pairs with payloads element
by element (a NULL element means no key) and behaves as in enqueue, scoped
to (queue, task, key): a key held by an unfinished job of the queue and
this task yields that job's id (a job of another task holding it does not
count), and a key repeated inside the array yields the id of its first
occurrence's job. Keys are inserted in key order, so concurrent calls with
overlapping keys wait for each other instead of deadlocking. A key held
by a job cancelled under a live lease (its held_until, see
taskboard.cancel) is no unfinished job's: a new job is inserted, runnable
no sooner than that lease's end.
trace_context (the caller's W3C trace context) is stored with every job
the call inserts, as in enqueue: one call is made in one context.
An empty array returns no rows. At most one NOTIFY per call, and only when
a new job is runnable now. Joins the caller's transaction.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payloads is NULL, multidimensional or holds a NULL, dedupe_keys
has a different length or holds an empty string or a key longer than 400
characters, priority or max_attempts is NULL, max_attempts < 1, or run_at
is 'infinity' or '-infinity' or outside the years 1 to 9999 (before
0001-01-01 or from 10000-01-01 on, UTC), or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text, or concurrency_keys is
multidimensional, of another length than payloads, or holds an empty key
or one longer than 200 characters.
Raises 23505, writing nothing, when a key of dedupe_keys has the same
SHA-256 as a different key held by an unfinished job of the queue and task,
or as a different key of the same call (no such pair is known): the index
cannot tell the two apart, and the other job is not the answer.
Calls of the seven-argument form of 0.1.0 to 0.3.0 resolve to this one:
the argument it gained comes last, with a default.$comment$;

REVOKE ALL ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) TO :"admin_role";

-- taskboard.enqueue_periodic
CREATE OR REPLACE FUNCTION taskboard.enqueue_periodic(schedule text, slot timestamp with time zone, task text, payload jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, previous_names text[] DEFAULT '{}'::text[])
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_id       bigint;
    v_previous text[] := '{}';
    v_name     text;
    v_fresh    boolean := false;
    v_last     timestamptz;
    v_task     text;
    v_queue    text;
    v_old_last timestamptz;
BEGIN
    PERFORM taskboard.check_name('schedule', enqueue_periodic.schedule);
    IF enqueue_periodic.slot IS NULL THEN
        RAISE EXCEPTION 'slot must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT pg_catalog.isfinite(enqueue_periodic.slot) THEN
        RAISE EXCEPTION 'slot must be a finite time, got %', enqueue_periodic.slot
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_time('slot', enqueue_periodic.slot);
    IF enqueue_periodic.slot > v_now THEN
        RAISE EXCEPTION 'slot must not be later than the database clock (%), got %', v_now, enqueue_periodic.slot
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The same checks as enqueue's, made before the slot is looked at: bad
    -- input is refused whether or not the slot is still free.
    PERFORM taskboard.check_name('task', enqueue_periodic.task);
    PERFORM taskboard.check_name('queue', enqueue_periodic.queue);
    IF enqueue_periodic.payload IS NULL THEN
        RAISE EXCEPTION 'payload must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_periodic.priority IS NULL THEN
        RAISE EXCEPTION 'priority must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_periodic.max_attempts IS NULL OR enqueue_periodic.max_attempts < 1 THEN
        RAISE EXCEPTION 'max_attempts must be at least 1, got %', enqueue_periodic.max_attempts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH v_name IN ARRAY COALESCE(enqueue_periodic.previous_names, '{}') LOOP
        PERFORM taskboard.check_name('previous_names', v_name);
        IF v_name <> enqueue_periodic.schedule THEN
            v_previous := v_previous || v_name;
        END IF;
    END LOOP;

    -- The schedule's row, locked: a concurrent caller of the same schedule
    -- waits here for this transaction, then sees the slot taken (or, after
    -- a rollback, free).
    SELECT s.last_slot, s.task, s.queue
      INTO v_last, v_task, v_queue
      FROM taskboard.schedule_slots AS s
     WHERE s.schedule = enqueue_periodic.schedule
       FOR UPDATE;
    IF NOT FOUND THEN
        -- The first call under this name. A renamed schedule's row starts
        -- as the latest of its previous names' rows, so that no slot they
        -- had is enqueued again. It takes this declaration's task and
        -- queue: a rename may change them too, and its first slot is then
        -- no conflict.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        SELECT enqueue_periodic.schedule, p.last_slot, p.last_job_id,
               enqueue_periodic.task, enqueue_periodic.queue, v_now
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous)
         ORDER BY p.last_slot DESC
         LIMIT 1
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        -- Otherwise the row starts with this slot, taken.
        INSERT INTO taskboard.schedule_slots AS s (schedule, last_slot, last_job_id, task, queue, updated_at)
        VALUES (enqueue_periodic.schedule, enqueue_periodic.slot, NULL,
                enqueue_periodic.task, enqueue_periodic.queue, v_now)
        ON CONFLICT ON CONSTRAINT schedule_slots_pkey DO NOTHING;
        v_fresh := FOUND;
        IF NOT v_fresh THEN
            SELECT s.last_slot, s.task, s.queue
              INTO v_last, v_task, v_queue
              FROM taskboard.schedule_slots AS s
             WHERE s.schedule = enqueue_periodic.schedule
               FOR UPDATE;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        IF v_last >= enqueue_periodic.slot THEN
            -- Taken. By this task on this queue: the schedule's job; by
            -- another: a conflict, never passed off as the schedule's job.
            -- NULL task: a row from before 0.4.5 whose job was pruned.
            IF v_task IS NOT NULL
               AND (v_task, v_queue) IS DISTINCT FROM (enqueue_periodic.task, enqueue_periodic.queue) THEN
                RAISE EXCEPTION 'schedule % has its slot % (or a later one, %) taken by task % on queue %, not task % on queue %',
                        enqueue_periodic.schedule, enqueue_periodic.slot, v_last, v_task, v_queue,
                        enqueue_periodic.task, enqueue_periodic.queue
                    USING ERRCODE = 'unique_violation',
                          HINT = 'two declarations share this schedule name; rename one, or remove the row with taskboard.remove_schedule';
            END IF;
            RETURN NULL;
        END IF;
    END IF;

    -- A worker still declaring an old name may have taken this slot under
    -- it since: its rows are locked (in name order) and compared too, so
    -- the new name enqueues no slot an old one holds, whichever came first.
    IF pg_catalog.cardinality(v_previous) > 0 THEN
        PERFORM
           FROM taskboard.schedule_slots AS p
          WHERE p.schedule = ANY (v_previous)
          ORDER BY p.schedule
            FOR UPDATE;
        SELECT pg_catalog.max(p.last_slot)
          INTO v_old_last
          FROM taskboard.schedule_slots AS p
         WHERE p.schedule = ANY (v_previous);
        IF v_old_last >= enqueue_periodic.slot THEN
            RETURN NULL;
        END IF;
    END IF;

    IF NOT v_fresh THEN
        UPDATE taskboard.schedule_slots AS s
           SET last_slot = enqueue_periodic.slot,
               last_job_id = NULL,
               task = enqueue_periodic.task,
               queue = enqueue_periodic.queue,
               updated_at = v_now
         WHERE s.schedule = enqueue_periodic.schedule;
    END IF;

    v_id := taskboard.enqueue(
        task         => enqueue_periodic.task,
        payload      => enqueue_periodic.payload,
        queue        => enqueue_periodic.queue,
        run_at       => enqueue_periodic.slot,
        priority     => enqueue_periodic.priority,
        max_attempts => enqueue_periodic.max_attempts
    );

    UPDATE taskboard.schedule_slots AS s
       SET last_job_id = v_id
     WHERE s.schedule = enqueue_periodic.schedule;
    -- The slot is taken under the previous names too, so that a worker
    -- still declaring an old name finds it taken.
    UPDATE taskboard.schedule_slots AS s
       SET last_slot = enqueue_periodic.slot,
           last_job_id = v_id,
           task = enqueue_periodic.task,
           queue = enqueue_periodic.queue,
           updated_at = v_now
     WHERE s.schedule = ANY (v_previous)
       AND s.last_slot < enqueue_periodic.slot;
    RETURN v_id;
END
$function$;

COMMENT ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) IS
$comment$enqueue_periodic(schedule, slot, task, payload, queue, priority, max_attempts, previous_names) -> bigint
Enqueues the job of one slot of a schedule (a time its cron fires, as the
caller computed it from the database clock) and returns its id: a queued
job of `task` on `queue` whose run_at is `slot`, so get_job shows which
slot it is. Exactly once per slot, whatever the number of callers: the
schedule's row in taskboard.schedule_slots is locked and compared
(last_slot < slot) before the job is inserted, and concurrent callers of
one slot wait for that row, then find the slot taken.
The row keeps the task and queue of its latest slot: they are part of the
slot's identity.
NULL: that slot, or a later one, was already enqueued for this task on
this queue; nothing changes. So only the latest of the slots missed while
no worker ran gets a job, when a caller sends it first.
previous_names: the names this schedule had before a rename. The first
call under the new name starts from the latest slot those rows hold, and
each slot taken is marked taken under them too, so no slot runs twice
across the rename; remove_schedule deletes the old rows once no worker
declares them.
Sends NOTIFY taskboard, '<queue>' as enqueue does (the job is runnable
now). Joins the caller's transaction: a rollback frees the slot again.
In REPEATABLE READ or SERIALIZABLE a race may raise 40001.
Executable by the worker and admin roles, not by producers.
Raises 23505 when that slot, or a later one, was taken for another task
or queue (two declarations share the name); nothing changes.
Raises 22023 when schedule, task or queue is NULL, empty or longer than
200 characters, slot is NULL, not finite, outside the years 1 to 9999
(before 0001-01-01 or from 10000-01-01 on, UTC) or later than the database
clock, payload, priority or max_attempts is NULL, max_attempts < 1, or a
name in previous_names is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) TO :"admin_role";

-- taskboard.enqueue_waiting
CREATE OR REPLACE FUNCTION taskboard.enqueue_waiting(task text, payload jsonb, queue text, run_at timestamp with time zone, priority integer, max_attempts integer, dedupe_key text, trace_context jsonb, concurrency_key text, depends_on bigint[], on_dependency_failure text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    v_now     timestamptz := pg_catalog.clock_timestamp();
    v_deps    bigint[];
    v_missing bigint;
    v_pending bigint[];
    v_failed  bigint;
    v_failed_state text;
    v_state   text;
    v_id      bigint;
BEGIN
    IF pg_catalog.array_ndims(enqueue_waiting.depends_on) > 1 THEN
        RAISE EXCEPTION 'depends_on must be a one-dimensional array of job ids'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(enqueue_waiting.depends_on, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'depends_on must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(enqueue_waiting.depends_on) > 10000 THEN
        RAISE EXCEPTION 'depends_on must name at most 10000 jobs, got %',
            pg_catalog.cardinality(enqueue_waiting.depends_on)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_waiting.dedupe_key IS NOT NULL THEN
        RAISE EXCEPTION 'a job with depends_on cannot have a dedupe_key'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_deps := ARRAY(SELECT DISTINCT d.id FROM pg_catalog.unnest(enqueue_waiting.depends_on) AS d(id) ORDER BY d.id);

    -- Each dependency read and held, in id order, with FOR KEY SHARE: the
    -- lock the edge's foreign key takes, which only a delete waits for, so
    -- the holders' writes go on. A dependency may then end while this
    -- transaction is open, its end unable to see the edge written here: the
    -- check written below reads each again once this transaction has
    -- committed (taskboard.recheck_dependencies). In REPEATABLE READ or
    -- SERIALIZABLE, a dependency changed since the snapshot raises 40001.
    WITH held AS MATERIALIZED (
        SELECT j.id, j.state
          FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_deps)
         ORDER BY j.id
           FOR KEY SHARE
    )
    SELECT (SELECT pg_catalog.min(d.id) FROM pg_catalog.unnest(v_deps) AS d(id)
             WHERE d.id NOT IN (SELECT h.id FROM held AS h)),
           ARRAY(SELECT h.id FROM held AS h WHERE h.state IN ('waiting', 'queued', 'running') ORDER BY h.id),
           (SELECT pg_catalog.min(h.id) FROM held AS h WHERE h.state IN ('dead', 'cancelled'))
      INTO v_missing, v_pending, v_failed;
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'depends_on names job %, which does not exist', v_missing
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    IF v_failed IS NOT NULL AND enqueue_waiting.on_dependency_failure = 'cancel' THEN
        -- A dependency already ended dead or cancelled: the job is cancelled
        -- from the start, with the reason, and waits for nothing.
        SELECT j.state INTO v_failed_state FROM taskboard.jobs AS j WHERE j.id = v_failed;
        INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                         trace_context, concurrency_key, state, finished_at, errors,
                                         dependencies_left, on_dependency_failure)
        VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
                enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
                enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, 'cancelled', v_now,
                pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                    'error', pg_catalog.format('dependency %s ended %s', v_failed, v_failed_state),
                    'attempt', 0,
                    'at', v_now)),
                0, enqueue_waiting.on_dependency_failure)
        RETURNING j.id INTO v_id;
        RETURN v_id;
    END IF;

    v_state := CASE WHEN pg_catalog.cardinality(v_pending) > 0 THEN 'waiting' ELSE 'queued' END;
    INSERT INTO taskboard.jobs AS j (queue, task, payload, priority, run_at, max_attempts,
                                     trace_context, concurrency_key, state,
                                     dependencies_left, on_dependency_failure)
    VALUES (enqueue_waiting.queue, enqueue_waiting.task, enqueue_waiting.payload,
            enqueue_waiting.priority, enqueue_waiting.run_at, enqueue_waiting.max_attempts,
            enqueue_waiting.trace_context, enqueue_waiting.concurrency_key, v_state,
            pg_catalog.cardinality(v_pending), enqueue_waiting.on_dependency_failure)
    RETURNING j.id INTO v_id;
    INSERT INTO taskboard.job_dependencies (job_id, depends_on)
    SELECT v_id, p.id FROM pg_catalog.unnest(v_pending) AS p(id);
    IF v_state = 'waiting' THEN
        INSERT INTO taskboard.dependency_checks (job_id, side) VALUES (v_id, 'dependent');
    END IF;

    IF v_state = 'queued' AND enqueue_waiting.run_at <= v_now THEN
        PERFORM taskboard.notify_runnable(enqueue_waiting.queue);
    END IF;
    RETURN v_id;
END
$function$;

COMMENT ON FUNCTION taskboard.enqueue_waiting(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) IS
$comment$enqueue_waiting(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context, concurrency_key, depends_on, on_dependency_failure) -> bigint
Internal: enqueue's insert of a job with depends_on, its other arguments
checked by enqueue. The job waits (state waiting) for those of depends_on
that have not ended, and is queued at once when all succeeded; when one
ended dead or cancelled, it is inserted cancelled with the error
'dependency N ended dead' (or cancelled), unless on_dependency_failure is
'run'. The dependencies are held with FOR KEY SHARE only, which no write
of their holders waits for; a job left waiting is checked again after
this transaction (taskboard.dependency_checks), in case a dependency ended
unseen meanwhile. Never granted to an application role.
Raises 22023 when depends_on is not one-dimensional, holds NULL, names
more than 10000 jobs or a job that does not exist, or dedupe_key is given.$comment$;

REVOKE ALL ON FUNCTION taskboard.enqueue_waiting(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.fail
CREATE OR REPLACE FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval DEFAULT NULL::interval, retry boolean DEFAULT true, traceback text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- A longer traceback keeps its last c_traceback_kept characters.
    c_traceback_max  constant integer := 16384;
    c_traceback_kept constant integer := 16000;
    v_now       timestamptz := pg_catalog.clock_timestamp();
    v_traceback text := fail.traceback;
    v_state     text;
BEGIN
    IF fail.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.retry IS NULL THEN
        RAISE EXCEPTION 'retry must not be NULL (true: retry while attempts are left; false: dead at once)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.retry_in IS NOT NULL THEN
        PERFORM taskboard.check_interval('retry_in', fail.retry_in, interval '12 hours');
    END IF;

    IF pg_catalog.length(v_traceback) > c_traceback_max THEN
        v_traceback := pg_catalog.format(
                '[traceback cut: its first %s characters are not stored]',
                pg_catalog.length(v_traceback) - c_traceback_kept)
            || E'\n' || pg_catalog.right(v_traceback, c_traceback_kept);
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN 'dead'
               ELSE 'queued'
           END,
           run_at = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN j.run_at
               ELSE v_now + coalesce(
                   fail.retry_in,
                   -- Past attempt 13 even 75 % of 2^attempt s exceeds the
                   -- one-hour cap; the exponent is bounded only so that
                   -- power() cannot overflow.
                   pg_catalog.make_interval(secs => least(
                       3600,
                       pg_catalog.power(2, least(j.attempt, 16)) * (0.75 + 0.5 * pg_catalog.random()))))
           END,
           finished_at = CASE WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN v_now END,
           errors = j.errors || pg_catalog.jsonb_build_array(
               pg_catalog.jsonb_build_object(
                   'error', fail.error,
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', v_now)
               || CASE
                      WHEN v_traceback IS NULL THEN '{}'::jsonb
                      ELSE pg_catalog.jsonb_build_object('traceback', v_traceback)
                  END)
     WHERE j.id = fail.job_id
       AND j.state = 'running'
       AND j.lease_token = fail.token
    RETURNING j.state INTO v_state;
    IF v_state IS NOT NULL THEN
        -- Its dependents, read in a statement of their own with the row
        -- locked (the UPDATE's snapshot may predate a wait for it).
        IF v_state = 'dead'
           AND (EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = fail.job_id)
                OR pg_catalog.current_setting('transaction_isolation') <> 'read committed') THEN
            PERFORM taskboard.settle_dependents(ARRAY[fail.job_id]);
        END IF;
        RETURN v_state;
    END IF;

    -- Refused: a line of the job's history when the token's lease was
    -- reclaimed or cancelled.
    PERFORM taskboard.record_refusals('refused_fail', ARRAY[fail.job_id], ARRAY[fail.token]);

    RETURN NULL;
END
$function$;

COMMENT ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) IS
$comment$fail(job_id, token, error, retry_in, retry, traceback) -> text
The holder reports a failed attempt. The error is recorded with the
attempt, the worker and the time, and with the traceback when one is
given (key `traceback`, absent otherwise). With `retry` true and attempts
left the job is queued again at clock + retry_in (NULL: 2^attempt seconds
with +/-25 % jitter, capped at one hour); with none left, or with `retry`
false (a non-retryable error, whatever attempts are left and whatever
retry_in says), it becomes dead at once, with finished_at, and the jobs
waiting on it (taskboard.enqueue's depends_on) are cancelled in the same
transaction, with the error 'dependency N ended dead', but for those
enqueued with on_dependency_failure 'run', which count it as ended.
Returns the new state, 'queued' or 'dead'.
The traceback is bounded: one longer than 16384 characters keeps its
last 16000 (where the exception is), after a first line saying how many
characters were cut, so at most 16 KiB of characters is stored.
NULL: the token is not current; the job does not change.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job's history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller's transaction: a caller that rolls back keeps none.
Raises 22023 when job_id, token or retry is NULL, or retry_in is not
positive or longer than 12 hours ('infinity' included).
Calls by name of the four-argument form of 0.1.0 and 0.2.0 resolve to
this one: the two arguments it gained come last, with defaults.$comment$;

REVOKE ALL ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) TO :"admin_role";

-- taskboard.find_jobs
CREATE OR REPLACE FUNCTION taskboard.find_jobs(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50)
 RETURNS SETOF taskboard.job_info
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
BEGIN
    IF find_jobs.queue = '' THEN
        RAISE EXCEPTION 'queue must not be empty (NULL: every queue)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.task = '' THEN
        RAISE EXCEPTION 'task must not be empty (NULL: every task)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.state NOT IN ('waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled') THEN
        RAISE EXCEPTION 'state must be waiting, queued, running, succeeded, dead or cancelled, got %',
            pg_catalog.quote_literal(find_jobs.state)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.max_rows IS NULL OR find_jobs.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000, got %',
            coalesce(find_jobs.max_rows::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      FROM taskboard.jobs AS j
     WHERE (find_jobs.queue IS NULL OR j.queue = find_jobs.queue)
       AND (find_jobs.state IS NULL OR j.state = find_jobs.state)
       AND (find_jobs.task IS NULL OR j.task = find_jobs.task)
       AND (find_jobs.after_id IS NULL OR j.id < find_jobs.after_id)
     ORDER BY j.id DESC
     LIMIT find_jobs.max_rows;
END
$function$;

COMMENT ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) IS
$comment$find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
Jobs for people and dashboards: those matching every filter given (NULL:
any), newest first by id, at most max_rows of them. Keyset paging: pass
the last job_id of a page as after_id to get the jobs older than it.
Each row is as get_job shows it: concurrency_key, and for a waiting job
waiting_for, the ids of the dependencies it still waits for.
Never a token. For every role: get_job already shows any job to each of
them, and ids are consecutive.
Raises 22023 when queue or task is empty, state is not one of waiting,
queued, running, succeeded, dead or cancelled, or max_rows is NULL or outside
1..1000.$comment$;

REVOKE ALL ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) TO :"admin_role";

-- taskboard.find_jobs_summary
CREATE OR REPLACE FUNCTION taskboard.find_jobs_summary(queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50)
 RETURNS SETOF taskboard.job_summary
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
BEGIN
    IF find_jobs_summary.queue = '' THEN
        RAISE EXCEPTION 'queue must not be empty (NULL: every queue)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs_summary.task = '' THEN
        RAISE EXCEPTION 'task must not be empty (NULL: every task)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs_summary.state NOT IN ('waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled') THEN
        RAISE EXCEPTION 'state must be waiting, queued, running, succeeded, dead or cancelled, got %',
            pg_catalog.quote_literal(find_jobs_summary.state)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs_summary.max_rows IS NULL
       OR find_jobs_summary.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000, got %',
            coalesce(find_jobs_summary.max_rows::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.started_at, j.finished_at,
           pg_catalog.jsonb_array_length(j.errors),
           pg_catalog.left(j.errors -> -1 ->> 'error', 200)
      FROM taskboard.jobs AS j
     WHERE (find_jobs_summary.queue IS NULL OR j.queue = find_jobs_summary.queue)
       AND (find_jobs_summary.state IS NULL OR j.state = find_jobs_summary.state)
       AND (find_jobs_summary.task IS NULL OR j.task = find_jobs_summary.task)
       AND (find_jobs_summary.after_id IS NULL OR j.id < find_jobs_summary.after_id)
     ORDER BY j.id DESC
     LIMIT find_jobs_summary.max_rows;
END
$function$;

COMMENT ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) IS
$comment$find_jobs_summary(queue, state, task, after_id, max_rows) -> setof taskboard.job_summary
The jobs find_jobs would return for the same arguments (every filter
given, NULL: any; newest first by id; keyset paging by after_id; at most
max_rows), each as a list shows it: job_id, queue, task, state, attempt,
max_attempts, priority, run_at, created_at, started_at, finished_at,
failures (how many entries its errors has) and last_error (the `error`
of the last entry, its first 200 characters; NULL when none). Never the
payload, the result, the errors themselves or a token: get_job gives
the whole job. For every role, as find_jobs.
Raises 22023 as find_jobs does: when queue or task is empty, state is not
one of waiting, queued, running, succeeded, dead or cancelled, or max_rows is
NULL or outside 1..1000.$comment$;

REVOKE ALL ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.find_jobs_summary(text,text,text,bigint,integer) TO :"admin_role";

-- taskboard.get_job
CREATE OR REPLACE FUNCTION taskboard.get_job(job_id bigint)
 RETURNS taskboard.job_info
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_job taskboard.job_info;
BEGIN
    IF get_job.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence, j.concurrency_key,
           CASE WHEN j.state = 'waiting' THEN
               ARRAY(SELECT d.depends_on
                       FROM taskboard.job_dependencies AS d
                      WHERE d.job_id = j.id
                      ORDER BY d.depends_on)
           END
      INTO v_job
      FROM taskboard.jobs AS j
     WHERE j.id = get_job.job_id;

    RETURN v_job;
END
$function$;

COMMENT ON FUNCTION taskboard.get_job(bigint) IS
$comment$get_job(job_id) -> taskboard.job_info
What a producer may see of a job: everything but the lease token.
started_at is when its last claim started it (NULL until claimed).
errors lists each failed attempt as {error, attempt, worker, at}, with a
traceback when the worker sent one (fail bounds it). payload is what the
job was enqueued with; fence is the number of its latest claim (0 before
the first). concurrency_key is the key the job was enqueued with (NULL:
none). waiting_for, for a waiting job, lists the ids of the dependencies
it still waits for, in id order (each leaves the list as it ends); NULL
for a job in any other state.
A row of NULLs for an unknown id.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.get_job(bigint) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.get_job(bigint) TO :"admin_role";

-- taskboard.job_activity
CREATE OR REPLACE FUNCTION taskboard.job_activity(recent interval DEFAULT '01:00:00'::interval)
 RETURNS TABLE(minute_start timestamp with time zone, queue text, succeeded bigint, failed bigint, dead bigint, cancelled bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_since timestamptz;
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far   boolean;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := job_activity.recent IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM job_activity.recent)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM job_activity.recent)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM job_activity.recent)) > 17520000);
    IF job_activity.recent IS NULL
       OR v_far
       OR v_clock - job_activity.recent >= v_clock
       OR v_clock - job_activity.recent < v_clock - interval '31 days' THEN
        RAISE EXCEPTION 'recent must be positive and at most 31 days, got %',
            coalesce(job_activity.recent::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_since := pg_catalog.clock_timestamp() - job_activity.recent;

    RETURN QUERY
    WITH recent_jobs AS (
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
        UNION ALL
        -- A job that failed and waits for its next attempt, or runs it; or
        -- one an admin retried (its attempts reset, its errors kept): only
        -- those whose last failure is within `recent` (the index
        -- jobs_unfinished_last_failure), since no earlier entry can be.
        SELECT j.queue, j.state, j.finished_at, j.errors
          FROM taskboard.jobs AS j
         WHERE j.state IN ('queued', 'running')
           AND j.errors <> '[]'::jsonb
           AND taskboard.last_failure_at(j.errors) >= v_since
    ), events AS (
        SELECT r.queue, r.state AS what, r.finished_at AS at
          FROM recent_jobs AS r
         WHERE r.finished_at IS NOT NULL
        UNION ALL
        SELECT r.queue, 'failed', (e.entry ->> 'at')::timestamptz
          FROM recent_jobs AS r
         CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(r.errors) AS e(entry)
         WHERE (e.entry ->> 'at')::timestamptz >= v_since
    )
    SELECT pg_catalog.date_trunc('minute', ev.at),
           ev.queue,
           pg_catalog.count(*) FILTER (WHERE ev.what = 'succeeded'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'failed'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'dead'),
           pg_catalog.count(*) FILTER (WHERE ev.what = 'cancelled')
      FROM events AS ev
     GROUP BY 1, 2
     ORDER BY 1, 2;
END
$function$;

COMMENT ON FUNCTION taskboard.job_activity(interval) IS
$comment$job_activity(recent) -> table of (minute_start, queue, succeeded, failed, dead, cancelled)
What happened within `recent`, per minute and queue, for charts:
  succeeded, dead, cancelled  jobs that finished so in that minute;
  failed                      attempts that failed in that minute (each
                              entry of a job's errors: a handler's failure,
                              retried or not, or a last attempt's lease
                              that expired).
Only minutes with something in them are returned, oldest first. It reads
the jobs finished within `recent` and the unfinished jobs whose last
failed attempt is within it, never the older ones.
Raises 22023 when recent is NULL, not positive or longer than 31 days,
by the time it gives: unless clock - 31 days <= clock - recent < clock,
months and days counted as the calendar makes them.$comment$;

REVOKE ALL ON FUNCTION taskboard.job_activity(interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.job_activity(interval) TO :"admin_role";

-- taskboard.job_history
CREATE OR REPLACE FUNCTION taskboard.job_history(job_id bigint)
 RETURNS TABLE(at timestamp with time zone, kind text, worker text, actor text, attempt integer, fence bigint, lease_expires_at timestamp with time zone, actor_worker text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF job_history.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT e.at, e.kind, e.worker, e.actor, e.attempt, e.fence, e.lease_expires_at, e.actor_worker
      FROM taskboard.job_events AS e
     WHERE e.job_id = job_history.job_id
     ORDER BY e.at, e.id;
END
$function$;

COMMENT ON FUNCTION taskboard.job_history(bigint) IS
$comment$job_history(job_id) -> setof (at, kind, worker, actor, attempt, fence, lease_expires_at, actor_worker)
The job's history beyond its errors, oldest first: 'reclaimed' (worker's
expired lease taken over by a claim: actor is the role it ran as,
actor_worker the worker name it stated), 'cancelled' (by actor; worker is
the holder when the job was running), 'retried' (by actor), and
'refused_complete', 'refused_fail', 'refused_renew' (a late write by
worker, whose lease was reclaimed or cancelled, refused by the fence;
once per lease and kind). actor is the database role in force (the one
SET ROLE chose, else the login); on a reclaim recorded before
actor_worker existed it is the worker name, and actor_worker is NULL, as
on every line but a reclaim. attempt, fence and lease_expires_at are the
holder's. Never a token.
No rows: the job is unknown or has no such history.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.job_history(bigint) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.job_history(bigint) TO :"admin_role";

-- taskboard.lease_state
CREATE OR REPLACE FUNCTION taskboard.lease_state(job_id bigint, token uuid)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_state text;
BEGIN
    IF lease_state.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lease_state.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    SELECT CASE
               WHEN j.state = 'running' AND j.lease_expires_at > pg_catalog.clock_timestamp() THEN 'held'
               WHEN j.state = 'running' THEN 'expired'
               WHEN j.state = 'succeeded' THEN 'completed'
           END
      INTO v_state
      FROM taskboard.jobs AS j
     WHERE j.id = lease_state.job_id
       AND j.lease_token = lease_state.token
       AND j.state IN ('running', 'succeeded');

    RETURN coalesce(v_state, 'lost');
END
$function$;

COMMENT ON FUNCTION taskboard.lease_state(bigint,uuid) IS
$comment$lease_state(job_id, token) -> text
Read-only answer for the holder, typically right before an external effect:
  held:      the token is current and its lease is live;
  expired:   the token is current but its lease is past its deadline and
             nobody has reclaimed the job yet (complete would still work);
  completed: the job succeeded with this token;
  lost:      anything else (reclaimed, failed, released, cancelled, unknown).
Raises 22023 when job_id or token is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.lease_state(bigint,uuid) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.lease_state(bigint,uuid) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.lease_state(bigint,uuid) TO :"admin_role";

-- taskboard.pause
CREATE OR REPLACE FUNCTION taskboard.pause(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', pause.queue);

    INSERT INTO taskboard.queues AS q (queue, paused)
    VALUES (pause.queue, true)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET paused = true,
           updated_at = pg_catalog.clock_timestamp()
     WHERE NOT q.paused;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.pause(text) IS
$comment$pause(queue) -> boolean
Pauses `queue`: from the next claim on, claim hands out nothing from it.
Its running jobs carry on, renew, complete and fail as usual; its queued
jobs wait. A queue needs no declaration: pausing one that has no jobs yet
works. True when this call paused it, false when it already was paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.pause(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.pause(text) TO :"admin_role";

-- taskboard.prune
CREATE OR REPLACE FUNCTION taskboard.prune(older_than interval, batch integer DEFAULT 10000)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_cutoff  timestamptz;
    v_deleted bigint;
    v_doomed  bigint[];
    v_clock   timestamptz := pg_catalog.clock_timestamp();
    v_far     boolean;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := prune.older_than IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM prune.older_than)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM prune.older_than)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM prune.older_than)) > 17520000);
    IF prune.older_than IS NULL
       OR (v_far AND prune.older_than < interval '0')
       OR (NOT v_far AND v_clock - prune.older_than > v_clock) THEN
        RAISE EXCEPTION 'older_than must not be NULL or negative, got %', prune.older_than
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock - prune.older_than < v_clock - interval '100 years' THEN
        RAISE EXCEPTION 'older_than must be at most 100 years, got %', prune.older_than
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF prune.batch IS NULL OR prune.batch < 1 THEN
        RAISE EXCEPTION 'batch must be at least 1, got %', prune.batch
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A value, not clock_timestamp() in the query: an index scan can stop at it.
    v_cutoff := pg_catalog.clock_timestamp() - prune.older_than;

    -- The candidates, locked: no edge to one of them can be written now (an
    -- edge's foreign key waits for this lock).
    v_doomed := ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.finished_at < v_cutoff
           AND j.state IN ('succeeded', 'cancelled', 'dead')
           -- A job cancelled under a live lease holds its place and key
           -- until that lease ends (held_until): deleting it would free them.
           AND (j.held_until IS NULL OR j.held_until <= pg_catalog.clock_timestamp())
         ORDER BY j.finished_at
         LIMIT prune.batch
           FOR UPDATE SKIP LOCKED);

    -- Nor one whose dependents are not all settled yet: its edges would go
    -- with it. Read in a statement of its own, with the rows locked: its
    -- snapshot shows every edge committed before the locks.
    WITH deleted AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_doomed)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id
    )
    SELECT pg_catalog.count(*) INTO v_deleted FROM deleted;

    RETURN v_deleted;
END
$function$;

COMMENT ON FUNCTION taskboard.prune(interval,integer) IS
$comment$prune(older_than, batch) -> bigint
Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
finished_at is before clock - older_than, oldest first, and returns how
many it deleted. Call again until it returns 0; small batches keep each
transaction short; concurrent callers skip each other's rows.
Only finished jobs are ever deleted, and not a job cancelled under a lease
that has not ended yet (held_until, see taskboard.cancel) before it ends,
nor one whose dependents are not settled yet (taskboard.dependency_checks).
Executable by the admin role only:
a worker login cannot delete jobs (claim, fail without retry, then prune
would erase any due queued job); a worker's retention setting prunes when
its login is granted the admin role.
The cutoff is read from the clock once, so the scan of finished jobs
stops at it: a call that finds nothing old enough reads next to nothing,
however many recent finished jobs the table keeps.
Raises 22023 when older_than is NULL, negative or longer than 100 years,
by the cutoff it gives: unless clock - 100 years <= clock - older_than <=
clock, months and days counted as the calendar makes them; or batch is
NULL or < 1.$comment$;

REVOKE ALL ON FUNCTION taskboard.prune(interval,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.prune(interval,integer) TO :"admin_role";

-- taskboard.queue_overview
CREATE OR REPLACE FUNCTION taskboard.queue_overview(recent interval DEFAULT '01:00:00'::interval)
 RETURNS TABLE(queue text, queued bigint, running bigint, runnable bigint, oldest_runnable_at timestamp with time zone, dead bigint, cancelled bigint, succeeded_recent bigint, dead_recent bigint, cancelled_recent bigint, paused boolean, max_running integer, max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, window_starts bigint, waiting bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- Read once: every count below is against the same instant.
    v_now   timestamptz := pg_catalog.clock_timestamp();
    v_since timestamptz;
    v_clock timestamptz := v_now;
    v_far   boolean;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := queue_overview.recent IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM queue_overview.recent)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM queue_overview.recent)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM queue_overview.recent)) > 17520000);
    IF queue_overview.recent IS NULL
       OR v_far
       OR v_clock - queue_overview.recent >= v_clock
       OR v_clock - queue_overview.recent < v_clock - interval '31 days' THEN
        RAISE EXCEPTION 'recent must be positive and at most 31 days, got %',
            coalesce(queue_overview.recent::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_since := v_now - queue_overview.recent;

    RETURN QUERY
    WITH pending AS (
        -- Each branch reads its state's partial index, never finished jobs.
        SELECT j.queue,
               pg_catalog.count(*) AS queued,
               0::bigint AS running,
               pg_catalog.count(*) FILTER (WHERE j.run_at <= v_now) AS runnable,
               pg_catalog.min(j.run_at) FILTER (WHERE j.run_at <= v_now) AS oldest
          FROM taskboard.jobs AS j
         WHERE j.state = 'queued'
         GROUP BY j.queue
        UNION ALL
        SELECT j.queue,
               0::bigint,
               pg_catalog.count(*),
               pg_catalog.count(*) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts),
               pg_catalog.min(j.lease_expires_at) FILTER (
                   WHERE j.lease_expires_at <= v_now AND j.attempt < j.max_attempts)
          FROM taskboard.jobs AS j
         WHERE j.state = 'running'
         GROUP BY j.queue
    ), unfinished AS (
        SELECT w.queue,
               pg_catalog.sum(w.queued)::bigint AS queued,
               pg_catalog.sum(w.running)::bigint AS running,
               pg_catalog.sum(w.runnable)::bigint AS runnable,
               pg_catalog.min(w.oldest) AS oldest
          FROM pending AS w
         GROUP BY w.queue
    ), failed AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.state IN ('dead', 'cancelled')
         GROUP BY j.queue
    ), finished AS (
        SELECT j.queue,
               pg_catalog.count(*) FILTER (WHERE j.state = 'succeeded') AS succeeded,
               pg_catalog.count(*) FILTER (WHERE j.state = 'dead') AS dead,
               pg_catalog.count(*) FILTER (WHERE j.state = 'cancelled') AS cancelled
          FROM taskboard.jobs AS j
         WHERE j.finished_at >= v_since
         GROUP BY j.queue
    ), dependents AS (
        -- The jobs waiting for dependencies, through their own index.
        SELECT j.queue, pg_catalog.count(*) AS waiting
          FROM taskboard.jobs AS j
         WHERE j.state = 'waiting'
         GROUP BY j.queue
    ), names AS (
        SELECT u.queue FROM unfinished AS u
        UNION SELECT f.queue FROM failed AS f
        UNION SELECT f.queue FROM finished AS f
        UNION SELECT q.queue FROM taskboard.queues AS q
        UNION SELECT d.queue FROM dependents AS d
    ), windows AS (
        -- The starts within each rate limit's window: of the queue, or of
        -- its busiest key (the log holds starts of limited queues only).
        SELECT k.queue, pg_catalog.max(k.starts) AS starts
          FROM (SELECT s.queue, pg_catalog.count(*) AS starts
                  FROM taskboard.queues AS q
                  JOIN taskboard.queue_starts AS s
                    ON s.queue = q.queue
                   AND s.started_at > v_now - q.rate_per
                   AND (NOT q.rate_by_key OR s.concurrency_key IS NOT NULL)
                 WHERE q.rate_starts IS NOT NULL
                 GROUP BY s.queue, CASE WHEN q.rate_by_key THEN s.concurrency_key END) AS k
         GROUP BY k.queue
    )
    SELECT n.queue,
           coalesce(u.queued, 0),
           coalesce(u.running, 0),
           coalesce(u.runnable, 0),
           u.oldest,
           coalesce(fa.dead, 0),
           coalesce(fa.cancelled, 0),
           coalesce(fi.succeeded, 0),
           coalesce(fi.dead, 0),
           coalesce(fi.cancelled, 0),
           coalesce(q.paused, false),
           q.max_running,
           q.max_running_per_key,
           q.rate_starts,
           q.rate_per,
           coalesce(q.rate_by_key, false),
           CASE WHEN q.rate_starts IS NOT NULL THEN coalesce(w.starts, 0) END,
           coalesce(d.waiting, 0)
      FROM names AS n
      LEFT JOIN unfinished AS u ON u.queue = n.queue
      LEFT JOIN failed AS fa ON fa.queue = n.queue
      LEFT JOIN finished AS fi ON fi.queue = n.queue
      LEFT JOIN taskboard.queues AS q ON q.queue = n.queue
      LEFT JOIN windows AS w ON w.queue = n.queue
      LEFT JOIN dependents AS d ON d.queue = n.queue
     ORDER BY n.queue;
END
$function$;

COMMENT ON FUNCTION taskboard.queue_overview(interval) IS
$comment$queue_overview(recent) -> table of one row per queue
Each queue as it stands, for people and dashboards, read without counting
the finished jobs beyond `recent`: a table of millions of succeeded jobs
costs it nothing. Per queue:
  queued, running      jobs in those states now (queued includes those
                       whose run_at is still ahead);
  runnable             what claim could hand out now if the queue were not
                       paused or at its limit: queued jobs that are due,
                       and running jobs whose lease expired with attempts
                       left;
  oldest_runnable_at   since when the longest-waiting of those has been
                       runnable (its run_at, or its lease's expiry);
  dead, cancelled      all such jobs still kept (prune removes them);
  succeeded_recent, dead_recent, cancelled_recent
                       jobs that finished so within `recent`;
  paused, max_running  the queue's settings (false and NULL by default);
  max_running_per_key, rate_starts, rate_per, rate_by_key
                       its limit per concurrency key and its rate limit
                       (NULL, NULL, NULL and false by default);
  window_starts        the jobs started within the last rate_per, of the
                       queue, or with rate_by_key of its busiest key;
                       NULL without a rate limit;
  waiting              jobs waiting for dependencies (see
                       taskboard.enqueue's depends_on).
A queue is listed when it has unfinished, dead or cancelled jobs, jobs
finished within `recent`, or settings. Ordered by queue.
Raises 22023 when recent is NULL, not positive or longer than 31 days,
by the time it gives: unless clock - 31 days <= clock - recent < clock,
months and days counted as the calendar makes them.$comment$;

REVOKE ALL ON FUNCTION taskboard.queue_overview(interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.queue_overview(interval) TO :"admin_role";

-- taskboard.release
CREATE OR REPLACE FUNCTION taskboard.release(job_id bigint, token uuid, delay interval DEFAULT '00:00:00'::interval)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_queue text;
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far   boolean;
BEGIN
    IF release.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF release.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := release.delay IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM release.delay)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM release.delay)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM release.delay)) > 17520000);
    IF release.delay IS NULL
       OR (v_far AND release.delay < interval '0')
       OR (NOT v_far AND v_clock + release.delay < v_clock) THEN
        RAISE EXCEPTION 'delay must not be NULL or negative, got %', release.delay
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock + release.delay > v_clock + interval '12 hours' THEN
        RAISE EXCEPTION 'delay must be at most 12 hours, got %', release.delay
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = 'queued',
           run_at = pg_catalog.clock_timestamp() + release.delay,
           attempt = j.attempt - 1
     WHERE j.id = release.job_id
       AND j.state = 'running'
       AND j.lease_token = release.token
    RETURNING j.queue INTO v_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;

    IF release.delay = interval '0' THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.release(bigint,uuid,interval) IS
$comment$release(job_id, token, delay) -> boolean
The holder hands the job back, typically at shutdown: it is queued again
at clock + delay and this claim is not counted as an attempt. Sends
NOTIFY taskboard, '<queue>' when delay is zero.
true:  released.
false: the token is not current; nothing changes.
Raises 22023 when job_id or token is NULL, or delay is NULL, negative or
longer than 12 hours ('infinity' included), by the time it gives: unless
clock <= clock + delay <= clock + 12 hours, months and days counted as
the calendar makes them.$comment$;

REVOKE ALL ON FUNCTION taskboard.release(bigint,uuid,interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.release(bigint,uuid,interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.release(bigint,uuid,interval) TO :"admin_role";

-- taskboard.remove_schedule
CREATE OR REPLACE FUNCTION taskboard.remove_schedule(schedule text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('schedule', remove_schedule.schedule);
    DELETE FROM taskboard.schedule_slots AS s
     WHERE s.schedule = remove_schedule.schedule;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.remove_schedule(text) IS
$comment$remove_schedule(schedule) -> boolean
Deletes the row of `schedule` in taskboard.schedule_slots (its latest
slot, job, task and queue) and returns true; false when it has none.
Its jobs are left as they are. A worker that still declares the schedule
enqueues its next due slot again, as for a new schedule.
Executable by the admin role only.
Raises 22023 when schedule is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.remove_schedule(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.remove_schedule(text) TO :"admin_role";

-- taskboard.renew
CREATE OR REPLACE FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval DEFAULT '00:01:00'::interval)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF renew.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF renew.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN (SELECT r.lease_expires_at
              FROM taskboard.renew_many(ARRAY[renew.job_id], ARRAY[renew.token], renew.lease) AS r);
END
$function$;

COMMENT ON FUNCTION taskboard.renew(bigint,uuid,interval) IS
$comment$renew(job_id, token, lease) -> timestamptz
Extends the holder's lease to clock + lease and returns the new deadline,
when `token` is current and its lease has not yet expired.
NULL: the token is not current (reclaimed, completed, failed, released,
cancelled) or its lease already expired; the job does not change and the worker
must treat the job as lost.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job's history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller's transaction: a caller that rolls back keeps none.
Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
or longer than 12 hours ('infinity' included).

renew_many of one job: the same update, answer and history line.$comment$;

REVOKE ALL ON FUNCTION taskboard.renew(bigint,uuid,interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO :"admin_role";

-- taskboard.renew_many
CREATE OR REPLACE FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval DEFAULT '00:01:00'::interval)
 RETURNS TABLE(job_id bigint, lease_expires_at timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_deadlines timestamptz[];
BEGIN
    IF renew_many.job_ids IS NULL THEN
        RAISE EXCEPTION 'job_ids must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF renew_many.tokens IS NULL THEN
        RAISE EXCEPTION 'tokens must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(renew_many.job_ids) > 1 OR pg_catalog.array_ndims(renew_many.tokens) > 1 THEN
        RAISE EXCEPTION 'job_ids and tokens must be one-dimensional arrays'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(renew_many.job_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'job_ids must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(renew_many.tokens, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'tokens must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(renew_many.job_ids) <> pg_catalog.cardinality(renew_many.tokens) THEN
        RAISE EXCEPTION 'job_ids has % elements but tokens has %',
            pg_catalog.cardinality(renew_many.job_ids), pg_catalog.cardinality(renew_many.tokens)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_interval('lease', renew_many.lease, interval '12 hours');

    WITH input AS (
        SELECT u.id, u.token, u.ord
          FROM unnest(renew_many.job_ids, renew_many.tokens) WITH ORDINALITY AS u(id, token, ord)
    ),
    locked AS MATERIALIZED (
        -- Every row holding its input token, locked in job_id order: found
        -- through the primary key, the state and lease read from the locked
        -- row rather than asked of the running index. FOR NO KEY UPDATE, the
        -- lock the update takes anyway: a refusal's FOR KEY SHARE
        -- (record_refusals), in this worker's complete_many, does not wait for it (FOR UPDATE made the
        -- two calls deadlock when a reclaim landed while they waited).
        SELECT j.id, j.state, j.lease_expires_at, i.token
          FROM taskboard.jobs AS j
          JOIN input AS i ON i.id = j.id AND i.token = j.lease_token
         WHERE j.id = ANY (renew_many.job_ids)
         ORDER BY j.id
           FOR NO KEY UPDATE OF j
    ),
    renewed AS (
        UPDATE taskboard.jobs AS j
           SET lease_expires_at = v_now + renew_many.lease
          FROM locked AS l
         WHERE j.id = l.id
           AND l.state = 'running'
           AND l.lease_expires_at > v_now
           AND j.lease_token = l.token
        RETURNING j.id, j.lease_token, j.lease_expires_at
    )
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord), pg_catalog.array_agg(r.lease_expires_at ORDER BY i.ord)
      INTO v_ids, v_deadlines
      FROM input AS i
      LEFT JOIN renewed AS r ON r.id = i.id AND r.lease_token = i.token;

    -- The refused rows, lines of their jobs' history when their lease was
    -- reclaimed or cancelled; when every row is accepted, nothing is read.
    IF pg_catalog.array_position(v_deadlines, NULL) IS NOT NULL THEN
        PERFORM taskboard.record_refusals('refused_renew',
            ARRAY(SELECT u.id FROM unnest(v_ids, v_deadlines) AS u(id, deadline)
                   WHERE u.deadline IS NULL),
            ARRAY(SELECT u.token FROM unnest(renew_many.tokens, v_deadlines) AS u(token, deadline)
                   WHERE u.deadline IS NULL));
    END IF;

    RETURN QUERY SELECT u.id, u.deadline FROM unnest(v_ids, v_deadlines) AS u(id, deadline);
END
$function$;

COMMENT ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) IS
$comment$renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
renew for many jobs in one statement: job_ids[i] is renewed with
tokens[i]. One row per input element, in input order; lease_expires_at is
the new deadline, or NULL where renewal was refused (token not current or
lease already expired: the job is lost to this worker). The rows holding
their given tokens are locked in job_id order, as complete_many locks
them, so one worker's renewer and completer never deadlock.
A refused write by a holder whose lease was reclaimed or cancelled is a
line of the job's history (taskboard.job_history), once per token and
kind; a token the history does not know is not recorded. The line is
written in the caller's transaction: a caller that rolls back keeps none.
Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
NULL, their lengths differ, or lease is NULL, not positive or longer than
12 hours ('infinity' included), by the deadline it gives: unless
clock < clock + lease <= clock + 12 hours, months and days counted as
the calendar makes them.

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it. Every step finds its rows by primary key, whatever the table held
when the plan was made.$comment$;

REVOKE ALL ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) TO :"admin_role";

-- taskboard.resume
CREATE OR REPLACE FUNCTION taskboard.resume(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', resume.queue);

    UPDATE taskboard.queues AS q
       SET paused = false,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.queue = resume.queue
       AND q.paused;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = resume.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(resume.queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.resume(text) IS
$comment$resume(queue) -> boolean
Resumes a paused `queue`: claim hands out its jobs again, and listeners
are told when one is runnable now (NOTIFY, unless taskboard.notify =
off). True when this call resumed it, false when it was not paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

REVOKE ALL ON FUNCTION taskboard.resume(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.resume(text) TO :"admin_role";

-- taskboard.retry
CREATE OR REPLACE FUNCTION taskboard.retry(job_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    v_queue text;
    v_run_at timestamptz;
    v_task text;
    v_key text;
    v_held_until timestamptz;
    v_left integer;
BEGIN
    IF retry.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    BEGIN
        -- A job that waited for dependencies waits again for the edges it
        -- still has: its count of them, kept by each settle that removed
        -- one. A settle in flight that holds the row is waited for; one
        -- that comes while this transaction holds it skips the row, and a
        -- later claim settles it (recheck_dependencies).
        UPDATE taskboard.jobs AS j
           SET state = CASE WHEN j.dependencies_left > 0 THEN 'waiting' ELSE 'queued' END,
               run_at = GREATEST(v_now, j.held_until),
               attempt = 0,
               result = NULL,
               finished_at = NULL
         WHERE j.id = retry.job_id
           AND j.state IN ('dead', 'cancelled')
        RETURNING j.queue, j.run_at, j.task, j.dedupe_key, coalesce(j.dependencies_left, 0)
             INTO v_queue, v_run_at, v_task, v_key, v_left;
    EXCEPTION
        WHEN unique_violation THEN
            -- jobs_unfinished_dedupe_key: another unfinished job holds the key.
            RETURN false;
    END;
    IF v_queue IS NULL THEN
        RETURN false;
    END IF;
    IF v_key IS NOT NULL THEN
        -- Its key is still held by another job cancelled under a live lease.
        SELECT pg_catalog.max(c.held_until)
          INTO v_held_until
          FROM taskboard.jobs AS c
         WHERE c.queue = v_queue
           AND c.held_until > v_run_at
           AND c.state = 'cancelled'
           AND c.task = v_task
           AND c.dedupe_key = v_key;
        IF v_held_until IS NOT NULL THEN
            UPDATE taskboard.jobs AS j
               SET run_at = v_held_until
             WHERE j.id = retry.job_id;
            v_run_at := v_held_until;
        END IF;
    END IF;
    INSERT INTO taskboard.job_events (job_id, kind, at, actor)
    VALUES (retry.job_id, 'retried', v_now,
            -- The role in force: the one SET ROLE chose, else the login.
            CASE pg_catalog.current_setting('role')
                WHEN 'none' THEN pg_catalog.session_user()::text
                ELSE pg_catalog.current_setting('role')
            END);

    IF v_run_at <= v_now AND v_left = 0 THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.retry(bigint) IS
$comment$retry(job_id) -> boolean
An administrator gives a dead or cancelled job another chance: it is
queued again with its attempts reset; its error history is kept, and
the retry is a line of its history (taskboard.job_history). It is
runnable now, and NOTIFY taskboard, '<queue>' is sent; except a job
cancelled while running whose lease had not ended (its held_until, see
taskboard.cancel): that one is runnable when that lease ends. Until then
its holder may still believe it holds the job: its writes are refused,
but an effect outside the database is not, and a second holder must not
start beside it. A job cancelled while queued (after a release too) has
no holder to wait for. Likewise a job with a dedupe_key is runnable no
sooner than the held_until of a cancelled job of its queue and task with
that key. A job cancelled while it waited for dependencies (see
taskboard.enqueue's depends_on) waits again for those that have not ended;
it locks none of them. The history line names the role in force (the one
SET ROLE chose, else the login).
true:  queued again (or waiting again).
false: the job is not dead or cancelled (or unknown), or its dedupe_key is
       now held by another unfinished job of the queue; nothing changes.
Raises 22023 when job_id is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.retry(bigint) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.retry(bigint) TO :"admin_role";

-- taskboard.revert_losses
CREATE OR REPLACE FUNCTION taskboard.revert_losses(release text DEFAULT NULL::text)
 RETURNS TABLE(data text, added_in text, rows bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_to integer[];
BEGIN
    IF revert_losses.release IS NOT NULL THEN
        IF revert_losses.release !~ '^[0-9]{1,4}[.][0-9]{1,4}[.][0-9]{1,4}$' THEN
            RAISE EXCEPTION 'release must be a release such as 0.2.0, or NULL for a revert of everything, got %',
                pg_catalog.quote_literal(revert_losses.release)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_to := pg_catalog.string_to_array(revert_losses.release, '.')::integer[];
    END IF;
    RETURN QUERY
    SELECT lost.data, lost.added_in, lost.rows
      FROM (
            SELECT 'jobs' AS data, '0.1.0' AS added_in,
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs) AS rows
            UNION ALL
            SELECT 'fences', '0.3.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.fence > 0)
            UNION ALL
            SELECT 'queue settings', '0.3.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.queues AS q
                     WHERE q.paused OR q.max_running IS NOT NULL)
            UNION ALL
            SELECT 'schedules', '0.3.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots)
            UNION ALL
            SELECT 'started_at', '0.3.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.started_at IS NOT NULL)
            UNION ALL
            SELECT 'trace contexts', '0.4.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.trace_context IS NOT NULL)
            UNION ALL
            SELECT 'job history', '0.4.5',
                   (SELECT pg_catalog.count(*) FROM taskboard.job_events)
            UNION ALL
            SELECT 'held places', '0.4.5',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j
                     WHERE j.held_until > pg_catalog.clock_timestamp())
            UNION ALL
            SELECT 'slot tasks and queues', '0.4.5',
                   (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots AS s
                     WHERE s.task IS NOT NULL)
            UNION ALL
            SELECT 'concurrency keys', '0.4.8',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j
                     WHERE j.concurrency_key IS NOT NULL)
            UNION ALL
            SELECT 'key limits', '0.4.8',
                   (SELECT pg_catalog.count(*) FROM taskboard.queues AS q
                     WHERE q.max_running_per_key IS NOT NULL)
            UNION ALL
            SELECT 'rate limits', '0.4.9',
                   (SELECT pg_catalog.count(*) FROM taskboard.queues AS q
                     WHERE q.rate_starts IS NOT NULL)
            UNION ALL
            SELECT 'dependencies', '0.5.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j
                     WHERE j.dependencies_left IS NOT NULL)
            UNION ALL
            SELECT 'waiting jobs', '0.5.0',
                   (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j
                     WHERE j.state = 'waiting')
            UNION ALL
            SELECT 'reclaiming workers', '0.6.1',
                   (SELECT pg_catalog.count(*) FROM taskboard.job_events AS e
                     WHERE e.actor_worker IS NOT NULL)
           ) AS lost
     WHERE lost.rows > 0
       AND (v_to IS NULL
            OR pg_catalog.string_to_array(lost.added_in, '.')::integer[] > v_to)
     ORDER BY pg_catalog.string_to_array(lost.added_in, '.')::integer[], lost.data;
END
$function$;

COMMENT ON FUNCTION taskboard.revert_losses(text) IS
$comment$revert_losses(release) -> table of (data, added_in, rows)
What a revert to `release` would drop: one row for each kind of data that
a release after `release` added and that holds something now, with the
release that added it and how many rows hold it:
  fences          jobs whose fence is above 0 (0.3.0)
  queue settings  paused or limited queues (0.3.0)
  schedules       schedules with an enqueued slot (0.3.0)
  started_at      jobs with a start time (0.3.0)
  trace contexts  jobs carrying a trace context (0.4.0)
  job history     lines of the jobs' history (0.4.5)
  held places     cancelled jobs whose lease has not ended yet, holding
                  their place and dedupe key (0.4.5)
  slot tasks and queues
                  schedules whose latest slot's task and queue are kept (0.4.5)
  concurrency keys
                  jobs carrying a concurrency key (0.4.8)
  key limits      queues with a limit per concurrency key (0.4.8)
  rate limits     queues with a rate limit, and their log of starts (0.4.9)
  dependencies    jobs enqueued with dependencies (0.5.0)
  waiting jobs    jobs waiting for dependencies, which a revert cancels (0.5.0)
  reclaiming workers
                  history lines of reclaims that keep the worker name the
                  reclaiming claim stated beside its role (0.6.1)
  jobs            every job, only for release NULL (a revert of everything)
No rows: the revert drops no data. Reads only; ordered by release.
Raises 22023 when release is not NULL and not of the form 0.2.0.
The revert of change revert_guard calls it, and refuses while it returns
a row for release 0.1.0 unless the Sqitch variable drop_data is yes.$comment$;

REVOKE ALL ON FUNCTION taskboard.revert_losses(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.revert_losses(text) TO :"admin_role";

-- taskboard.set_key_limit
CREATE OR REPLACE FUNCTION taskboard.set_key_limit(queue text, max_running_per_key integer)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', set_key_limit.queue);
    IF set_key_limit.max_running_per_key < 1 THEN
        RAISE EXCEPTION 'max_running_per_key must be at least 1 or NULL (no key limit), got %; pause the queue to stop it',
            set_key_limit.max_running_per_key
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A key limit must count the claims still in flight, as a first queue
    -- limit does (taskboard.set_queue_limit): each claim holds the queue's
    -- claim lock, shared, until its transaction ends, and this call waits
    -- for them. Always, not only when the queue has no key limit yet: a
    -- removal of the limit not yet committed would otherwise let a limit
    -- set just after it pass unlocked, though claims made meanwhile did
    -- not count.
    IF set_key_limit.max_running_per_key IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_key_limit.queue));
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running_per_key)
    VALUES (set_key_limit.queue, set_key_limit.max_running_per_key)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running_per_key = EXCLUDED.max_running_per_key,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.max_running_per_key IS DISTINCT FROM EXCLUDED.max_running_per_key;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_key_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_key_limit.queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.set_key_limit(text,integer) IS
$comment$set_key_limit(queue, max_running_per_key) -> boolean
From the next claim on, claim never lets more than `max_running_per_key`
jobs of one concurrency key of `queue` hold a lease at once (a lease that
expired counts until its job is reclaimed or finished, a cancelled job's
until it ends), counted across all workers and under concurrent
claimers; jobs of other keys and jobs without a key are still claimed.
A key limit counts the claims already made: setting one waits for the
claim transactions of the queue still open. NULL
removes the key limit. True when this call changed it, false when it
already was `max_running_per_key`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running_per_key is below 1 (pause the queue to stop it).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_key_limit(text,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_key_limit(text,integer) TO :"admin_role";

-- taskboard.set_queue_limit
CREATE OR REPLACE FUNCTION taskboard.set_queue_limit(queue text, max_running integer)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM taskboard.check_name('queue', set_queue_limit.queue);
    IF set_queue_limit.max_running < 1 THEN
        RAISE EXCEPTION 'max_running must be at least 1 or NULL (no limit), got %; pause the queue to stop it',
            set_queue_limit.max_running
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A limit must count the claims still in flight: each holds the
    -- queue's claim lock, shared, until its transaction ends. Taken
    -- exclusively here, it waits for them; claims that come meanwhile wait
    -- for this transaction and then read the limit (taskboard.claim).
    -- Always, not only for a first limit: a removal of the limit not yet
    -- committed would otherwise let a limit set just after it pass
    -- unlocked, though claims made meanwhile did not count.
    IF set_queue_limit.max_running IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_queue_limit.queue));
    END IF;

    INSERT INTO taskboard.queues AS q (queue, max_running)
    VALUES (set_queue_limit.queue, set_queue_limit.max_running)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET max_running = EXCLUDED.max_running,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.max_running IS DISTINCT FROM EXCLUDED.max_running;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_queue_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_queue_limit.queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.set_queue_limit(text,integer) IS
$comment$set_queue_limit(queue, max_running) -> boolean
From the next claim on, claim never lets more than `max_running` jobs of
`queue` run at once, counted across all workers and also under
concurrent claimers (claimers of a limited queue take turns on its row).
A limit counts the claims already made: setting one waits for the claim
transactions of the queue still open, and claims of the queue wait for it
until this call's transaction ends.
Jobs already running over a lowered limit carry on; no new one starts
until the queue is under it. NULL removes the limit. Listeners are told
when a raised or removed limit leaves a job runnable now. True when this
call changed the limit, false when it already was `max_running`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running is below 1 (pause the queue to stop it).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_queue_limit(text,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_queue_limit(text,integer) TO :"admin_role";

-- taskboard.set_rate_limit
CREATE OR REPLACE FUNCTION taskboard.set_rate_limit(queue text, starts integer, per interval, by_key boolean DEFAULT false)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- per as a fixed length: months counted as 30 days and days as 24
    -- hours (as EXTRACT(epoch) counts them), so that the window is the same
    -- on every date and in every session's time zone.
    v_seconds numeric;
    v_per interval;
BEGIN
    PERFORM taskboard.check_name('queue', set_rate_limit.queue);
    IF (set_rate_limit.starts IS NULL) <> (set_rate_limit.per IS NULL) THEN
        RAISE EXCEPTION 'starts and per must both be given, or both be NULL (no rate limit), got starts % and per %',
            coalesce(set_rate_limit.starts::text, 'NULL'), coalesce(set_rate_limit.per::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF set_rate_limit.by_key IS NULL THEN
        RAISE EXCEPTION 'by_key must be true or false, got NULL'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF set_rate_limit.starts IS NULL AND set_rate_limit.by_key THEN
        RAISE EXCEPTION 'by_key needs a rate limit: give starts and per, or by_key false to remove it'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF set_rate_limit.starts NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'starts must be between 1 and 100000 or NULL (no rate limit), got %; pause the queue to stop it',
            set_rate_limit.starts
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF set_rate_limit.per IS NOT NULL THEN
        v_seconds := EXTRACT(epoch FROM set_rate_limit.per);
        IF v_seconds <= 0 THEN
            RAISE EXCEPTION 'per must be positive, got %', set_rate_limit.per
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF v_seconds > 31 * 86400 THEN
            RAISE EXCEPTION 'per must be at most 31 days, got %', set_rate_limit.per
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_per := pg_catalog.make_interval(secs => v_seconds::double precision);
    END IF;

    IF set_rate_limit.starts IS NULL THEN
        -- No row is written for a queue that has none, and the log of the
        -- queue's starts goes with its limit.
        UPDATE taskboard.queues AS q
           SET rate_starts = NULL, rate_per = NULL, rate_by_key = false,
               updated_at = pg_catalog.clock_timestamp()
         WHERE q.queue = set_rate_limit.queue
           AND q.rate_starts IS NOT NULL;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        DELETE FROM taskboard.queue_starts AS s WHERE s.queue = set_rate_limit.queue;
    ELSE
        -- A rate limit must count the starts of the claims still in flight,
        -- as a first queue limit does (taskboard.set_queue_limit): each claim
        -- holds the queue's claim lock, shared, until its transaction ends,
        -- and this call waits for them; the claims after it take turns on
        -- the queue's row and log their starts.
        PERFORM pg_catalog.pg_advisory_xact_lock(1952605797, pg_catalog.hashtext(set_rate_limit.queue));
        INSERT INTO taskboard.queues AS q (queue, rate_starts, rate_per, rate_by_key)
        VALUES (set_rate_limit.queue, set_rate_limit.starts, v_per, set_rate_limit.by_key)
        ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
           SET rate_starts = EXCLUDED.rate_starts,
               rate_per = EXCLUDED.rate_per,
               rate_by_key = EXCLUDED.rate_by_key,
               updated_at = pg_catalog.clock_timestamp()
         WHERE (q.rate_starts, q.rate_per, q.rate_by_key)
               IS DISTINCT FROM (EXCLUDED.rate_starts, EXCLUDED.rate_per, EXCLUDED.rate_by_key);
        IF NOT FOUND THEN
            RETURN false;
        END IF;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = set_rate_limit.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(set_rate_limit.queue);
    END IF;
    RETURN true;
END
$function$;

COMMENT ON FUNCTION taskboard.set_rate_limit(text,integer,interval,boolean) IS
$comment$set_rate_limit(queue, starts, per, by_key default false) -> boolean
From the next claim on, claim starts at most `starts` jobs of `queue` in
any window of length `per`, on the database's clock, across all workers
and under concurrent claimers; a reclaim of an expired lease is a start.
With by_key, each concurrency key gets `starts` per window of its own, and
jobs without a key are not limited by it; claim still takes the jobs of
other keys behind a key that used up its window. Jobs held back wait,
queued, neither failed nor delayed. The starts are counted from the claims
made since the limit was set: setting one waits for the claim
transactions of the queue still open. NULL starts and per remove the rate
limit and forget the queue's starts. True when this call changed the
limit, false when it already was this one.
Raises 22023 when queue is NULL, empty or longer than 200 characters,
only one of starts and per is NULL, starts is outside 1..100000, per is
not positive or longer than 31 days, or by_key is NULL, or true without a
limit. per is kept as a fixed length of time, a month counted as 30 days
and a day as 24 hours, so that the window is the same on every date and
in every time zone ('1 day' is kept as 24:00:00).$comment$;

REVOKE ALL ON FUNCTION taskboard.set_rate_limit(text,integer,interval,boolean) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_rate_limit(text,integer,interval,boolean) TO :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.6.2'::text
$function$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"admin_role";

-- taskboard.worker_leases
CREATE OR REPLACE FUNCTION taskboard.worker_leases(max_rows integer DEFAULT 500)
 RETURNS TABLE(worker text, job_id bigint, queue text, task text, attempt integer, fence bigint, started_at timestamp with time zone, lease_expires_at timestamp with time zone, expires_in interval, state text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF worker_leases.max_rows IS NULL OR worker_leases.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000, got %', worker_leases.max_rows
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

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

COMMENT ON FUNCTION taskboard.worker_leases(integer) IS
$comment$worker_leases(max_rows) -> setof (worker, job_id, queue, task, attempt, fence, started_at, lease_expires_at, expires_in, state)
Who holds what: one row per running job, and per job cancelled under a
lease that has not ended yet (its holder may still be at work: state
cancelled, lease_expires_at its held_until), by worker (claimed_by), then
the lease that ends first; at most max_rows rows (default 500). started_at
is the holder's claim, lease_expires_at its deadline, expires_in that
deadline minus the database's clock (negative: the lease expired and the
job waits for a reclaim, or for claim to bury it; never for a cancelled
job, which leaves the list when its lease ends). state is running or
cancelled. Never a token.
Raises 22023 when max_rows is NULL or outside 1..1000.$comment$;

REVOKE ALL ON FUNCTION taskboard.worker_leases(integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.worker_leases(integer) TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
