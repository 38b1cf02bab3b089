-- Deploy taskboard:version to pg
--
-- Release 0.6.6: written by `make schema` from the function files (never by
-- hand), those that differ from release 0.6.5's.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- taskboard.complete_held
CREATE OR REPLACE FUNCTION taskboard.complete_held(job_ids bigint[], tokens uuid[], results jsonb[], clock timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
DECLARE
    v_done bigint;
BEGIN
    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = i.result,
           finished_at = complete_held.clock
      FROM (SELECT u.id, u.token, u.result
              FROM unnest(complete_held.job_ids, complete_held.tokens, complete_held.results)
                   AS u(id, token, result)
             ORDER BY u.id) AS i
     WHERE j.id = ANY (complete_held.job_ids)
       AND j.id = i.id
       AND j.lease_token = i.token
       AND pg_catalog.texteq(j.state, 'running');
    GET DIAGNOSTICS v_done = ROW_COUNT;
    RETURN v_done;
END
$function$;

COMMENT ON FUNCTION taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone) IS
$comment$complete_held(job_ids, tokens, results, clock) -> bigint
Internal: the write of taskboard.complete_many for more than one job.
Marks succeeded, with results[i] and finished_at = clock, each job of
job_ids[i] that is running under tokens[i], in one update, and answers
how many it marked. Its rows are found through the primary key and
written in job_id order, the order renew_many locks them in: a row
another transaction is writing is waited for and tested again as that
transaction left it. results NULL: every result is NULL. Checks nothing:
complete_many checked the arguments.
Called by complete_many; never granted to an application role.

plan_cache_mode = force_generic_plan with enable_seqscan = off, as
complete_many: one plan per session, walking the primary key. The state
test is a function call, which no partial index's predicate matches (a
plan kept from an empty table walked the running index). enable_hashjoin
and enable_bitmapscan off keep the job_id order: the plan is then a merge
join or a nested loop whose outer side is either the input sorted by id
or the primary key walked in id order, and each keeps its outer side's
order (a bitmap scan reads the rows in the table's order, which a hash
join keeps: one worker's renewer and completer then deadlocked).$comment$;

REVOKE ALL ON FUNCTION taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone) FROM PUBLIC, :"producer_role", :"worker_role", :"admin_role";

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

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
