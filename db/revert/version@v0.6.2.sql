-- Revert taskboard:version from pg
--
-- Release 0.6.2: written by `make schema` (never by hand). A revert stops at
-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds
-- data, unless the Sqitch variable drop_data is yes; then release 0.6.1's
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
        RAISE EXCEPTION 'a revert to a release before 0.6.2 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

-- taskboard.record_refusals, no more
DROP FUNCTION taskboard.record_refusals(text,bigint[],uuid[]);

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

    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = complete.result,
           finished_at = pg_catalog.clock_timestamp()
     WHERE j.id = complete.job_id
       AND j.state = 'running'
       AND j.lease_token = complete.token;
    IF FOUND THEN
        -- Its dependents, read in a statement of their own with the row
        -- locked: this snapshot shows every edge committed before the lock
        -- (the UPDATE's may predate a wait for it).
        IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = complete.job_id)
           OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            PERFORM taskboard.settle_dependents(ARRAY[complete.job_id]);
        END IF;
        RETURN true;
    END IF;

    -- The same holder asking again after its own success.
    IF EXISTS (
        SELECT
          FROM taskboard.jobs AS j
         WHERE j.id = complete.job_id
           AND j.state = 'succeeded'
           AND j.lease_token = complete.token
    ) THEN
        RETURN true;
    END IF;

    -- Refused. A token the history knows (its lease was reclaimed or
    -- cancelled) is recorded once per token; any other token is not.
    INSERT INTO taskboard.job_events
           (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT e.job_id, 'refused_complete', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
      FROM taskboard.job_events AS e
     WHERE e.job_id = complete.job_id
       AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(complete.token))
       AND e.kind IN ('reclaimed', 'cancelled')
       -- Its job still there, and kept there until this statement ends: an
       -- admin's prune of the job commits first, and the line goes with it,
       -- rather than failing the refusal with 23503.
       AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
     LIMIT 1
    ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING;

    RETURN false;
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
Raises 22023 when job_id or token is NULL.$comment$;

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

    RETURN QUERY
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
        -- FOR KEY SHARE below, in this worker's renew_many, does not wait for
        -- it (FOR UPDATE made the two calls deadlock when a reclaim landed
        -- while they waited).
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
    ),
    refused AS (
        -- The refused rows whose token the history knows (its lease was
        -- reclaimed or cancelled), once per token; any other is not
        -- recorded, and an accepted row is not looked up: when every row
        -- is accepted, nothing is read.
        INSERT INTO taskboard.job_events
               (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
        SELECT DISTINCT ON (e.job_id, e.token_digest)
               e.job_id, 'refused_complete', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
          FROM input AS i
          JOIN taskboard.job_events AS e
            ON e.job_id = i.id
           AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(i.token))
           AND e.kind IN ('reclaimed', 'cancelled')
         WHERE NOT EXISTS (SELECT FROM succeeded AS a WHERE a.id = i.id AND a.lease_token = i.token)
           -- Its job still there, and kept there until this statement ends:
           -- an admin's prune of the job commits first, and the line goes
           -- with it, rather than failing the refusal with 23503.
           AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
         ORDER BY e.job_id, e.token_digest
        ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING
    )
    SELECT i.id,
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
      FROM input AS i
     ORDER BY i.ord;

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

    -- Refused. A token the history knows (its lease was reclaimed or
    -- cancelled) is recorded once per token; any other token is not.
    INSERT INTO taskboard.job_events
           (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT e.job_id, 'refused_fail', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
      FROM taskboard.job_events AS e
     WHERE e.job_id = fail.job_id
       AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(fail.token))
       AND e.kind IN ('reclaimed', 'cancelled')
       -- Its job still there, and kept there until this statement ends: an
       -- admin's prune of the job commits first, and the line goes with it,
       -- rather than failing the refusal with 23503.
       AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
     LIMIT 1
    ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING;

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

-- taskboard.renew
CREATE OR REPLACE FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval DEFAULT '00:01:00'::interval)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_deadline timestamptz;
BEGIN
    IF renew.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF renew.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_interval('lease', renew.lease, interval '12 hours');

    UPDATE taskboard.jobs AS j
       SET lease_expires_at = v_now + renew.lease
     WHERE j.id = renew.job_id
       AND j.state = 'running'
       AND j.lease_token = renew.token
       AND j.lease_expires_at > v_now
    RETURNING j.lease_expires_at INTO v_deadline;
    IF v_deadline IS NOT NULL THEN
        RETURN v_deadline;
    END IF;

    -- Refused. A token the history knows (its lease was reclaimed or
    -- cancelled) is recorded once per token; any other token is not.
    INSERT INTO taskboard.job_events
           (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT e.job_id, 'refused_renew', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
      FROM taskboard.job_events AS e
     WHERE e.job_id = renew.job_id
       AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(renew.token))
       AND e.kind IN ('reclaimed', 'cancelled')
       -- Its job still there, and kept there until this statement ends: an
       -- admin's prune of the job commits first, and the line goes with it,
       -- rather than failing the refusal with 23503.
       AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
     LIMIT 1
    ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING;

    RETURN NULL;
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
or longer than 12 hours ('infinity' included).$comment$;

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

    RETURN QUERY
    WITH input AS (
        SELECT u.id, u.token, u.ord
          FROM unnest(renew_many.job_ids, renew_many.tokens) WITH ORDINALITY AS u(id, token, ord)
    ),
    locked AS MATERIALIZED (
        -- Every row holding its input token, locked in job_id order: found
        -- through the primary key, the state and lease read from the locked
        -- row rather than asked of the running index. FOR NO KEY UPDATE, the
        -- lock the update takes anyway: a refusal's FOR KEY SHARE, in this
        -- worker's complete_many, does not wait for it (FOR UPDATE made the
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
    ),
    refused AS (
        -- The refused rows whose token the history knows (its lease was
        -- reclaimed or cancelled), once per token; any other is not
        -- recorded, and an accepted row is not looked up: when every row
        -- is accepted, nothing is read.
        INSERT INTO taskboard.job_events
               (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
        SELECT DISTINCT ON (e.job_id, e.token_digest)
               e.job_id, 'refused_renew', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
          FROM input AS i
          JOIN taskboard.job_events AS e
            ON e.job_id = i.id
           AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(i.token))
           AND e.kind IN ('reclaimed', 'cancelled')
         WHERE NOT EXISTS (SELECT FROM renewed AS a WHERE a.id = i.id AND a.lease_token = i.token)
           -- Its job still there, and kept there until this statement ends:
           -- an admin's prune of the job commits first, and the line goes
           -- with it, rather than failing the refusal with 23503.
           AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
         ORDER BY e.job_id, e.token_digest
        ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING
    )
    SELECT i.id, r.lease_expires_at
      FROM input AS i
      LEFT JOIN renewed AS r ON r.id = i.id AND r.lease_token = i.token
     ORDER BY i.ord;
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

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.6.1'::text
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
