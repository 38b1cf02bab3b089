-- Deploy taskboard:version to pg
--
-- Release 0.7.2: written by `make schema` from the function files (never by
-- hand), those that differ from release 0.7.1's.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

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
    -- (nothing to bury or reclaim). Only queued jobs can be taken, and
    -- nothing is recorded in the history: two steps, the jobs picked and
    -- locked (pick_next), and the grant.
    IF v_limit IS NULL AND v_key_limit IS NULL AND v_rate_starts IS NULL THEN
        v_ids := taskboard.pick_next(claim.queue, v_now, claim.batch);
        IF v_ids IS NOT NULL THEN
            RETURN QUERY SELECT * FROM taskboard.grant_leases(v_ids, claim.batch, claim.worker, claim.lease, v_now);
            RETURN;
        END IF;
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

claim dispatches: its pickers (pick_next, pick_queued, pick_expired, pick_keyed,
bury_spent, and the bounds queue_room, window_room, full_keys,
rate_full_keys) choose the jobs and write no lease; grant_leases grants
every lease. plan_cache_mode = force_generic_plan with enable_seqscan =
off, which the functions it calls run with too: one plan per statement
and session, made at the first call and kept until PostgreSQL
invalidates it (a change to the table, its indexes or its statistics, a
VACUUM); planning on every call cost about as much as running. A worker
usually first claims an empty queue, and the plans are then made for an
empty table, so each step is written to be bounded whatever the table
held: the running jobs of this queue (its partial index), the head of
its queued index, and primary-key probes by id; with sequential scans
off, no step scans the table (tests/sql/test_claim_plan.py).
A queue with no limit and no lease expired by the claim's clock takes the
common path: two steps (pick_next: a check of its running jobs and the
head of its queued index, locked; grant_leases: the update); the steps
of expired leases, limits and the history run only when there is one.
A session with taskboard.claim_cursor = on, as the driver's control
connections are, takes the jobs after its last ones and checks for
expired leases at most every 200 ms on that path (pick_next): a job
queued ahead of them, and an expired lease, may wait that long (longer
while the walks are slow) unless the claim finds fewer jobs than its
batch.
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

-- taskboard.pick_next
CREATE OR REPLACE FUNCTION taskboard.pick_next(queue text, clock timestamp with time zone, most integer)
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_keeps boolean := pg_catalog.current_setting('taskboard.claim_cursor', true) IS NOT DISTINCT FROM 'on';
    v_name text := 'taskboard.cursor_' || pg_catalog.to_hex(pg_catalog.hashtext(pick_next.queue));
    -- The cursor: when the next walk is due (µs since the epoch), then the
    -- last picked job's priority, run_at (µs since the epoch) and id.
    v_cursor text[];
    v_due bigint;
    v_priority bigint;
    v_run_at timestamptz;
    v_id bigint;
    v_ids bigint[];
BEGIN
    IF v_keeps THEN
        v_cursor := pg_catalog.regexp_match(pg_catalog.current_setting(v_name, true),
                                            '^(\d{1,17}) (-?\d{1,12}) (-?\d{1,17}) (\d{1,18}) (.*)$');
    END IF;
    IF v_cursor IS NOT NULL AND v_cursor[5] = pick_next.queue
       AND (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint < v_cursor[1]::bigint THEN
        v_priority := v_cursor[2]::bigint;
        v_run_at := 'epoch'::timestamptz + v_cursor[3]::bigint * interval '1 microsecond';
        v_ids := ARRAY(
            SELECT j.id
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_next.queue
               AND j.state = 'queued'
               AND j.priority = v_priority
               AND (j.run_at, j.id) > (v_run_at, v_cursor[4]::bigint)
               AND j.run_at <= pick_next.clock
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT pick_next.most
               FOR NO KEY UPDATE SKIP LOCKED);
        IF pg_catalog.cardinality(v_ids) < pick_next.most THEN
            v_ids := v_ids || ARRAY(
                SELECT j.id
                  FROM taskboard.jobs AS j
                 WHERE j.queue = pick_next.queue
                   AND j.state = 'queued'
                   AND j.priority < v_priority
                   AND j.run_at <= pick_next.clock
                 ORDER BY j.priority DESC, j.run_at, j.id
                 LIMIT pick_next.most - pg_catalog.cardinality(v_ids)
                   FOR NO KEY UPDATE SKIP LOCKED);
        END IF;
        IF pg_catalog.cardinality(v_ids) = pick_next.most THEN
            v_due := v_cursor[1]::bigint;
        END IF;
    END IF;

    IF v_due IS NULL THEN
        -- The walk from the head, once no lease of the queue has expired (the
        -- check walks this queue's running jobs).
        IF EXISTS (
            SELECT
              FROM taskboard.jobs AS x
             WHERE x.queue = pick_next.queue
               AND x.state = 'running'
               AND x.lease_expires_at <= pick_next.clock) THEN
            RETURN NULL;
        END IF;
        v_ids := taskboard.pick_queued(pick_next.queue, pick_next.clock, pick_next.most);
        IF NOT v_keeps THEN
            RETURN v_ids;
        END IF;
        v_due := (EXTRACT(epoch FROM pick_next.clock) * 1000000)::bigint
                 + GREATEST(200000, 20 * (EXTRACT(epoch FROM pg_catalog.clock_timestamp() - pick_next.clock)
                                          * 1000000)::bigint);
    END IF;

    -- The cursor moves to the last job picked; none picked, none kept.
    SELECT j.priority, j.run_at, j.id
      INTO v_priority, v_run_at, v_id
      FROM taskboard.jobs AS j
     WHERE j.id = v_ids[pg_catalog.cardinality(v_ids)];
    PERFORM pg_catalog.set_config(v_name, CASE WHEN v_id IS NOT NULL THEN pg_catalog.concat_ws(' ',
        v_due, v_priority, (EXTRACT(epoch FROM v_run_at) * 1000000)::bigint, v_id, pick_next.queue) ELSE '' END,
        false);
    RETURN v_ids;
END
$function$;

COMMENT ON FUNCTION taskboard.pick_next(text,timestamp with time zone,integer) IS
$comment$pick_next(queue, clock, most) -> bigint[]
Internal: the picker of claim's common path (a queue without limits).
NULL when a lease of `queue` expired by `clock`: the claim then takes the
path that reclaims and buries. Else the first `most` queued jobs whose
run_at is due by `clock`, in claim order (priority, higher first, then
run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED, as pick_queued
picks them: a walk from the head of the queue's queued index.
A session with taskboard.claim_cursor = on (the driver's control
connections set it) keeps a cursor per queue in a session setting
(taskboard.cursor_<hash of the queue>): the claim-order key of the last
job it picked, and when its next walk from the head is due. Until then,
it picks the queued jobs after its cursor instead, and looks for no
expired lease; when those are fewer than `most` it walks from the head as
any claim does. A walk is due at least 200 ms after the last one, later
while walks are slow: twenty times the last walk's time, counted from the
claim's clock to the walk's end. So, while a transaction holds the xmin
horizon back and the head of the index fills with entries no claim can
use, most claims of such a session read only the jobs they take; what it
gives up: a job that becomes queued ahead of the cursor (a higher
priority, an earlier run_at, a release or retry committed late) and an
expired lease wait for the next walk of some session, unless a claim
finds fewer jobs after its cursor than it asked for. The setting is
transactional: a claim rolled back leaves the cursor as it was. A
malformed or foreign value counts as no cursor.
Writes nothing but that setting; the rows it locked stay locked until the
caller's transaction ends.
Called by claim; never granted to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.pick_next(text,timestamp with time zone,integer) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.7.2'::text
$function$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
