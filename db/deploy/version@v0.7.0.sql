-- Deploy taskboard:version to pg
--
-- Release 0.7.0: written by `make schema` from the function files (never by
-- hand), those that differ from release 0.6.6's.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- db/next/deploy.sql, written by hand
-- A queue may discard its jobs at their accepted completion
-- (taskboard.set_queue_discard): the setting, and an index of the queues
-- that have it, so a completion asks one small index whether any does.
ALTER TABLE taskboard.queues ADD COLUMN discard_succeeded boolean NOT NULL DEFAULT false;
CREATE INDEX queues_discarding ON taskboard.queues (queue) WHERE discard_succeeded;
COMMENT ON COLUMN taskboard.queues.discard_succeeded IS
    'true: an accepted completion deletes the job, its history with it, instead of keeping it succeeded (set_queue_discard).';
COMMENT ON TABLE taskboard.queues IS
    'Queue settings (paused, limits, discard_succeeded). Written only by the taskboard functions.';

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
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- How many jobs the update completed.
    v_done bigint;
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_completed boolean[];
    -- The jobs this call deleted in a queue that discards, and their tokens.
    v_gone_ids    bigint[] := '{}';
    v_gone_tokens uuid[] := '{}';
BEGIN
    v_checked := taskboard.check_leases('job_ids, tokens and results', complete_many.job_ids, complete_many.tokens,
                                        pg_catalog.array_ndims(complete_many.results));
    v_checked := taskboard.check_lengths('results', pg_catalog.cardinality(complete_many.results),
                                         'job_ids', pg_catalog.cardinality(complete_many.job_ids));

    -- A queue that discards: its jobs held by their tokens are deleted
    -- (discard_held), those of the others updated below. Only in READ
    -- COMMITTED, where a statement sees every edge committed before it.
    IF EXISTS (SELECT FROM taskboard.queues AS q WHERE q.discard_succeeded)
       AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        SELECT coalesce(pg_catalog.array_agg(g.job_id), '{}'), coalesce(pg_catalog.array_agg(g.token), '{}')
          INTO v_gone_ids, v_gone_tokens
          FROM taskboard.discard_held(complete_many.job_ids, complete_many.tokens) AS g;
    END IF;

    -- The write: every job held by its given token, in one update
    -- (complete_held: in job_id order, the order renew_many locks them in).
    -- One job: one row, one lock, no order to keep; found by its id (the
    -- state test is a function call, which no partial index's predicate
    -- matches: a plan kept from an empty table walked the running index).
    IF pg_catalog.cardinality(complete_many.job_ids) = 1 THEN
        UPDATE taskboard.jobs AS j
           SET state = 'succeeded',
               result = complete_many.results[pg_catalog.array_lower(complete_many.results, 1)],
               finished_at = v_now
         WHERE j.id = complete_many.job_ids[pg_catalog.array_lower(complete_many.job_ids, 1)]
           AND j.lease_token = complete_many.tokens[pg_catalog.array_lower(complete_many.tokens, 1)]
           AND pg_catalog.texteq(j.state, 'running');
        GET DIAGNOSTICS v_done = ROW_COUNT;
    ELSE
        v_done := taskboard.complete_held(complete_many.job_ids, complete_many.tokens,
                                          complete_many.results, v_now);
    END IF;
    v_done := v_done + pg_catalog.cardinality(v_gone_ids);
    IF v_done = pg_catalog.cardinality(complete_many.job_ids) THEN
        -- The common case: every job completed, nothing else to read.
        RETURN QUERY SELECT u.id, true FROM unnest(complete_many.job_ids) AS u(id);
        IF EXISTS (SELECT FROM taskboard.job_dependencies AS d
                    WHERE d.depends_on = ANY (complete_many.job_ids))
           OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            PERFORM taskboard.settle_dependents(complete_many.job_ids);
        END IF;
        RETURN;
    END IF;

    -- Each row answered from the job as it is now, this update's writes
    -- included: succeeded by its token (by this call, or by an earlier one
    -- of the same holder, one that committed while the update waited for
    -- the row included), deleted by this call in a queue that discards, or
    -- refused. A refused row is only read.
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord),
           pg_catalog.array_agg(
           EXISTS (SELECT
                     FROM taskboard.jobs AS j
                    WHERE j.id = i.id
                      AND j.lease_token = i.token
                      AND j.state = 'succeeded')
           OR EXISTS (SELECT
                        FROM unnest(v_gone_ids, v_gone_tokens) AS g(id, token)
                       WHERE g.id = i.id
                         AND g.token = i.token)
           ORDER BY i.ord)
      INTO v_ids, v_completed
      FROM unnest(complete_many.job_ids, complete_many.tokens) WITH ORDINALITY AS i(id, token, ord);

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
nothing. The jobs it completes are written in job_id order, the order
renew_many locks them in; a refused job is only read.
Each accepted completion settles the jobs waiting on its job in the same
transaction, as complete does. In a queue that discards
(taskboard.set_queue_discard) an accepted completion deletes the job
instead (discard_held), in READ COMMITTED; a completion repeated after
that finds no job and answers false.
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

-- taskboard.discard_held
CREATE OR REPLACE FUNCTION taskboard.discard_held(job_ids bigint[], tokens uuid[])
 RETURNS TABLE(job_id bigint, token uuid)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_locked bigint[];
BEGIN
    IF NOT EXISTS (SELECT
                     FROM unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token)
                     JOIN taskboard.jobs AS j ON j.id = u.id
                    WHERE j.lease_token = u.token
                      AND j.state = 'running'
                      AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)) THEN
        RETURN;
    END IF;
    IF pg_catalog.cardinality(discard_held.job_ids) > 1 THEN
        PERFORM
           FROM taskboard.jobs AS j
           JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
          WHERE j.id = ANY (discard_held.job_ids)
            AND j.lease_token = u.token
            AND j.state = 'running'
          ORDER BY j.id
            FOR NO KEY UPDATE OF j;
    END IF;
    v_locked := ARRAY(SELECT j.id
                        FROM taskboard.jobs AS j
                        JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
                       WHERE j.id = ANY (discard_held.job_ids)
                         AND j.lease_token = u.token
                         AND j.state = 'running'
                         AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)
                       ORDER BY j.id
                         FOR UPDATE OF j SKIP LOCKED);
    RETURN QUERY
    WITH gone AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_locked)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id, j.lease_token
    )
    SELECT gone.id, gone.lease_token FROM gone;
END
$function$;

COMMENT ON FUNCTION taskboard.discard_held(bigint[],uuid[]) IS
$comment$discard_held(job_ids, tokens) -> table of (job_id, token)
Internal: the delete of taskboard.complete_many for the jobs of discarding
queues (taskboard.set_queue_discard). Deletes each job of job_ids[i] that
is running under tokens[i] in a queue that discards, unless a job waits
on it or another transaction holds a lock on it, and answers each job it
deleted with the token that held it. When the call holds such a job and
more than one job, every job it holds is first locked in job_id order
with the lock the completion's update takes (FOR NO KEY UPDATE), the
order renew_many locks them in; the delete's own lock (FOR UPDATE) is then
taken only where nobody else holds one (SKIP LOCKED), so it waits for
nothing. An enqueue naming the job in depends_on holds it FOR KEY SHARE:
held before, the job is skipped and kept; asked for after, it waits for
this transaction and then finds no job. The edges are read in a
statement after those locks, so every edge committed before is seen.
Checks nothing: complete_many checked the arguments, and calls it only in
READ COMMITTED, when a queue discards. Never granted to an application role.$comment$;

REVOKE ALL ON FUNCTION taskboard.discard_held(bigint[],uuid[]) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

-- taskboard.revert_losses
CREATE OR REPLACE FUNCTION taskboard.revert_losses(release text DEFAULT NULL::text)
 RETURNS TABLE(data text, added_in text, rows bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_to integer[];
BEGIN
    IF revert_losses.release IS NOT NULL THEN
        v_checked := taskboard.check_arg(revert_losses.release ~ '^[0-9]{1,4}[.][0-9]{1,4}[.][0-9]{1,4}$',
                 'release must be a release such as 0.2.0, or NULL for a revert of everything, got '
                 || pg_catalog.quote_literal(revert_losses.release));
        v_to := pg_catalog.string_to_array(revert_losses.release, '.')::integer[];
    END IF;
    RETURN QUERY
    SELECT lost.data, lost.added_in, lost.rows
      FROM (VALUES
            ('jobs', '0.1.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs)),
            ('fences', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.fence > 0)),
            ('queue settings', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.paused OR q.max_running IS NOT NULL)),
            ('schedules', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots)),
            ('started_at', '0.3.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.started_at IS NOT NULL)),
            ('trace contexts', '0.4.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.trace_context IS NOT NULL)),
            ('job history', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.job_events)),
            ('held places', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.held_until > pg_catalog.clock_timestamp())),
            ('slot tasks and queues', '0.4.5', (SELECT pg_catalog.count(*) FROM taskboard.schedule_slots AS s WHERE s.task IS NOT NULL)),
            ('concurrency keys', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.concurrency_key IS NOT NULL)),
            ('key limits', '0.4.8', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.max_running_per_key IS NOT NULL)),
            ('rate limits', '0.4.9', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.rate_starts IS NOT NULL)),
            ('dependencies', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.dependencies_left IS NOT NULL)),
            ('waiting jobs', '0.5.0', (SELECT pg_catalog.count(*) FROM taskboard.jobs AS j WHERE j.state = 'waiting')),
            ('reclaiming workers', '0.6.1', (SELECT pg_catalog.count(*) FROM taskboard.job_events AS e WHERE e.actor_worker IS NOT NULL)),
            ('discarding queues', '0.7.0', (SELECT pg_catalog.count(*) FROM taskboard.queues AS q WHERE q.discard_succeeded))
           ) AS lost(data, added_in, rows)
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
  discarding queues
                  queues that delete their jobs at completion (0.7.0)
  jobs            every job, only for release NULL (a revert of everything)
No rows: the revert drops no data. Reads only; ordered by release.
Raises 22023 when release is not NULL and not of the form 0.2.0.
The revert of change revert_guard calls it, and refuses while it returns
a row for release 0.1.0 unless the Sqitch variable drop_data is yes.$comment$;

REVOKE ALL ON FUNCTION taskboard.revert_losses(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.revert_losses(text) TO :"admin_role";

-- taskboard.set_queue_discard
CREATE OR REPLACE FUNCTION taskboard.set_queue_discard(queue text, discard boolean)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', set_queue_discard.queue);
    v_checked := taskboard.check_given('discard', set_queue_discard.discard,
                                       'true deletes completed jobs, false keeps them');
    IF NOT set_queue_discard.discard
       AND NOT EXISTS (SELECT FROM taskboard.queues AS r WHERE r.queue = set_queue_discard.queue) THEN
        RETURN false;
    END IF;

    INSERT INTO taskboard.queues AS q (queue, discard_succeeded)
    VALUES (set_queue_discard.queue, set_queue_discard.discard)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET discard_succeeded = EXCLUDED.discard_succeeded,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.discard_succeeded IS DISTINCT FROM EXCLUDED.discard_succeeded;
    RETURN FOUND;
END
$function$;

COMMENT ON FUNCTION taskboard.set_queue_discard(text,boolean) IS
$comment$set_queue_discard(queue, discard) -> boolean
discard true: from the next completion on, an accepted completion of a job
of `queue` deletes the job, with its history, instead of keeping it
succeeded; false (the default of every queue): jobs are kept. For queues
whose finished jobs nobody reads. What a discarded job gives up: get_job,
find_jobs, the dashboard and the CLI no longer find it, its result is
gone, and a completion repeated with its token answers false (as for a
pruned job) where a kept job answers true. The completion is fenced as
always: a token that is not current deletes nothing. A job is kept
succeeded, for prune to delete, when a job waits on it (depends_on), when
another transaction holds a lock on it at that moment (a producer naming
it in depends_on, a renewal in flight: the completion never waits for
one), and when the completion runs in a transaction that is not READ
COMMITTED. Failed, dead and cancelled jobs are always kept. True when
this call changed the setting, false when it already was `discard`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
discard is NULL.$comment$;

REVOKE ALL ON FUNCTION taskboard.set_queue_discard(text,boolean) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.set_queue_discard(text,boolean) TO :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.7.0'::text
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
