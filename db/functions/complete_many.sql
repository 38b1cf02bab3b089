-- complete_many(job_ids, tokens, results) -> setof (job_id, completed)
-- complete for many jobs in one statement: job_ids[i] is completed with
-- tokens[i] and results[i] (results NULL: every result is NULL). Each row is
-- fenced on its own token and answered on its own, in input order:
-- completed is true when that job is succeeded by that token (now or by an
-- earlier call), false when the token is not current; a refused job changes
-- nothing. The jobs it completes are written in job_id order, the order
-- renew_many locks them in; a refused job is only read.
-- Each accepted completion settles the jobs waiting on its job in the same
-- transaction, as complete does. In a queue that discards
-- (taskboard.set_queue_discard) an accepted completion deletes the job
-- instead (discard_held), in READ COMMITTED; a completion repeated after
-- that finds no job and answers false.
-- A refused write by a holder whose lease was reclaimed or cancelled is a
-- line of the job's history (taskboard.job_history), once per token and
-- kind; a token the history does not know is not recorded. The line is
-- written in the caller's transaction: a caller that rolls back keeps none.
-- Raises 22023 when job_ids or tokens is NULL or holds a NULL, an array is
-- multidimensional, or the lengths of job_ids, tokens and (when given)
-- results differ. A NULL element of results means no result for that job.
--
-- plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
-- per session, made at the first call and kept until PostgreSQL invalidates
-- it; planned on every call, planning cost about three times running the
-- statement for one job. Every step finds its rows by primary key, whatever
-- the table held when the plan was made.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
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

REVOKE ALL ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) TO taskboard_admin;
