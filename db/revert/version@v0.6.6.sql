-- Revert taskboard:version from pg
--
-- Release 0.6.6: written by `make schema` (never by hand). A revert stops at
-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds
-- data, unless the Sqitch variable drop_data is yes; then release 0.6.5's
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
        RAISE EXCEPTION 'a revert to a release before 0.6.6 may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;

-- taskboard.complete_held, no more
DROP FUNCTION taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone);

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

    -- The only write: every job held by its given token, in one update. Its
    -- rows are found through the primary key (the state test is a function
    -- call, which no partial index's predicate matches: a plan kept from an
    -- empty table walked the running index) and written in job_id order,
    -- the order renew_many locks them in. A row another transaction is
    -- writing is waited for and tested again as that transaction left it.
    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = i.result,
           finished_at = v_now
      FROM (SELECT u.id, u.token, u.result
              FROM unnest(complete_many.job_ids, complete_many.tokens, complete_many.results)
                   AS u(id, token, result)
             ORDER BY u.id) AS i
     WHERE j.id = ANY (complete_many.job_ids)
       AND j.id = i.id
       AND j.lease_token = i.token
       AND pg_catalog.texteq(j.state, 'running');
    GET DIAGNOSTICS v_done = ROW_COUNT;
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

-- taskboard.version
CREATE OR REPLACE FUNCTION taskboard.version()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
SELECT '0.6.5'::text
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
