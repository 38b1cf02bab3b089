-- Revert taskboard:version from pg
--
-- Release 0.7.0: written by `make schema` (never by hand). A revert stops at
-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds
-- data, unless the Sqitch variable drop_data is yes; then release 0.6.6's
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
        RAISE EXCEPTION 'a revert to a release before 0.7.0 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

-- taskboard.discard_held, no more
DROP FUNCTION taskboard.discard_held(bigint[],uuid[]);

-- taskboard.set_queue_discard, no more
DROP FUNCTION taskboard.set_queue_discard(text,boolean);

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
BEGIN
    v_checked := taskboard.check_leases('job_ids, tokens and results', complete_many.job_ids, complete_many.tokens,
                                        pg_catalog.array_ndims(complete_many.results));
    v_checked := taskboard.check_lengths('results', pg_catalog.cardinality(complete_many.results),
                                         'job_ids', pg_catalog.cardinality(complete_many.job_ids));

    -- The only write: every job held by its given token, in one update
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
    -- the row included), or refused. A refused row is only read.
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord),
           pg_catalog.array_agg(
           EXISTS (SELECT
                     FROM taskboard.jobs AS j
                    WHERE j.id = i.id
                      AND j.lease_token = i.token
                      AND j.state = 'succeeded')
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
            ('reclaiming workers', '0.6.1', (SELECT pg_catalog.count(*) FROM taskboard.job_events AS e WHERE e.actor_worker IS NOT NULL))
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
  jobs            every job, only for release NULL (a revert of everything)
No rows: the revert drops no data. Reads only; ordered by release.
Raises 22023 when release is not NULL and not of the form 0.2.0.
The revert of change revert_guard calls it, and refuses while it returns
a row for release 0.1.0 unless the Sqitch variable drop_data is yes.$comment$;

REVOKE ALL ON FUNCTION taskboard.revert_losses(text) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.revert_losses(text) TO :"admin_role";

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.6.6'::text
$function$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.version() FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"producer_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"worker_role";
GRANT EXECUTE ON FUNCTION taskboard.version() TO :"admin_role";

-- db/next/revert.sql, written by hand
COMMENT ON TABLE taskboard.queues IS
    'Queue settings (paused, max_running). Written only by the taskboard functions.';
DROP INDEX taskboard.queues_discarding;
ALTER TABLE taskboard.queues DROP COLUMN discard_succeeded;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
