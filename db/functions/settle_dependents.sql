-- settle_dependents(job_ids) -> void
-- Internal: settles what the end of each job of `job_ids` (succeeded, dead
-- or cancelled, in the caller's transaction) means for the jobs waiting on
-- it. Its edges are removed; a dependent whose last dependency ended
-- successfully becomes queued, runnable from its run_at or now, whichever
-- is later (NOTIFY taskboard, '<queue>' when runnable now); one whose
-- dependency ended dead or cancelled becomes cancelled, with an error
-- 'dependency N ended dead' (or cancelled), and its own dependents after it,
-- unless it was enqueued with on_dependency_failure 'run': then the
-- dependency counts as ended like a success, and the dependent is runnable
-- no sooner than the lease a cancelled dependency's holder was given
-- (held_until). A dependent that another transaction has locked is skipped,
-- so an end never waits here; every dependent, a cancelled one too, counts
-- the edges it loses. One call removes at most 1000 edges: the jobs whose
-- edges are left (budget spent, or dependents skipped) are settled later,
-- 1000 edges at a time, by recheck_dependencies (claim calls it), and so are
-- the jobs given in a transaction that is not READ COMMITTED. A job whose edges were settled
-- already, that has none, or that has not ended changes nothing. Called by
-- complete, complete_many, fail, cancel, claim and recheck_dependencies;
-- never granted to an application role. Raises nothing.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.settle_dependents(job_ids bigint[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_nestloop TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The edges this call may still remove.
    v_budget integer := 1000;
    -- The ended jobs whose edges the next round settles: those given, then
    -- those of them with edges left and the dependents a round cancelled.
    v_ended bigint[] := settle_dependents.job_ids;
    v_removed integer;
    v_cancelled bigint[];
    v_queues text[];
BEGIN
    -- A snapshot older than this statement may not show every edge
    -- committed before the end: the jobs are read again after this
    -- transaction, in a fresh one (taskboard.recheck_dependencies).
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        INSERT INTO taskboard.dependency_checks (job_id, side)
        SELECT DISTINCT e.id, 'dependency' FROM pg_catalog.unnest(settle_dependents.job_ids) AS e(id)
        ON CONFLICT ON CONSTRAINT dependency_checks_pkey DO NOTHING;
    END IF;

    WHILE pg_catalog.cardinality(v_ended) > 0 AND v_budget > 0 LOOP
        WITH edges AS MATERIALIZED (
            -- At most the budget's edges of the ended jobs; a job that is
            -- not ended (retried since) has none settled.
            SELECT d.job_id, d.depends_on
              FROM taskboard.job_dependencies AS d
             WHERE d.depends_on = ANY (ARRAY(SELECT p.id
                                               FROM taskboard.jobs AS p
                                              WHERE p.id = ANY (v_ended)
                                                AND p.state IN ('succeeded', 'dead', 'cancelled')))
             LIMIT v_budget
        ),
        locked AS MATERIALIZED (
            -- Their dependents, each locked before any of its edges is
            -- removed, so that its count of dependencies left always equals
            -- its edges. One another transaction has locked (a settle of
            -- another of its dependencies, an admin's cancel or retry) is
            -- skipped, its edges left for a later call: no end waits here.
            SELECT c.id, c.state
              FROM taskboard.jobs AS c
             WHERE c.id = ANY (ARRAY(SELECT DISTINCT e.job_id FROM edges AS e))
             ORDER BY c.id
               FOR NO KEY UPDATE OF c SKIP LOCKED
        ),
        gone AS (
            -- The locked dependents' edges to the ended jobs, found through
            -- the primary key (a join here was planned as a scan of every
            -- edge): those picked, and any other such edge of theirs.
            DELETE FROM taskboard.job_dependencies AS d
             WHERE d.job_id = ANY (ARRAY(SELECT l.id FROM locked AS l))
               AND d.depends_on = ANY (ARRAY(SELECT DISTINCT e.depends_on FROM edges AS e))
            RETURNING d.job_id, d.depends_on
        ),
        tally AS (
            -- Per dependent: how many of its dependencies ended here, the
            -- first of them that did not succeed, and how long a cancelled
            -- one's holder may still act.
            SELECT g.job_id,
                   pg_catalog.count(*)::integer AS ended,
                   pg_catalog.min(g.depends_on) FILTER (WHERE p.state <> 'succeeded') AS failed,
                   pg_catalog.max(p.held_until) FILTER (WHERE p.state = 'cancelled') AS held_until
              FROM gone AS g
              JOIN taskboard.jobs AS p ON p.id = g.depends_on
             WHERE p.id = ANY (v_ended)
             GROUP BY g.job_id
        ),
        changed AS (
            -- Every dependent counts the edges it lost (a cancelled one too,
            -- so that a retry of it waits for exactly the edges it has); a
            -- waiting one moves on. Joined by id to the locked rows: a plan
            -- that walked the tally for each row made a wide fan-out
            -- quadratic.
            UPDATE taskboard.jobs AS c
               SET dependencies_left = c.dependencies_left - t.ended,
                   state = CASE
                       WHEN l.state <> 'waiting' THEN c.state
                       WHEN t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN 'cancelled'
                       WHEN c.dependencies_left - t.ended = 0 THEN 'queued'
                       ELSE 'waiting'
                   END,
                   finished_at = CASE
                       WHEN l.state = 'waiting' AND t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel'
                       THEN v_now
                       ELSE c.finished_at
                   END,
                   -- Runnable from its own run_at, or from now when that
                   -- passed while it waited; a dependent that runs anyway
                   -- beside a cancelled dependency no sooner than the end
                   -- of the lease that dependency's holder was given.
                   run_at = CASE
                       WHEN l.state <> 'waiting' THEN c.run_at
                       WHEN t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN c.run_at
                       WHEN c.dependencies_left - t.ended = 0
                       THEN GREATEST(c.run_at, v_now, t.held_until)
                       ELSE GREATEST(c.run_at, t.held_until)
                   END,
                   errors = CASE
                       WHEN l.state = 'waiting' AND t.failed IS NOT NULL AND c.on_dependency_failure = 'cancel'
                       THEN c.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                           'error', pg_catalog.format('dependency %s ended %s', t.failed,
                                                      (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = t.failed)),
                           'attempt', c.attempt,
                           'at', v_now))
                       ELSE c.errors
                   END
              FROM tally AS t, locked AS l
             WHERE c.id = t.job_id
               AND l.id = t.job_id
               AND c.id = ANY (ARRAY(SELECT k.id FROM locked AS k))
            RETURNING c.id, c.state, l.state AS was, c.queue, c.run_at
        )
        SELECT (SELECT pg_catalog.count(*)::integer FROM gone),
               ARRAY(SELECT x.id FROM changed AS x WHERE x.state = 'cancelled' AND x.was = 'waiting'),
               ARRAY(SELECT DISTINCT x.queue FROM changed AS x
                      WHERE x.state = 'queued' AND x.was = 'waiting' AND x.run_at <= v_now)
          INTO v_removed, v_cancelled, v_queues;
        PERFORM taskboard.notify_runnable(q.queue)
           FROM pg_catalog.unnest(v_queues) AS q(queue);
        v_budget := v_budget - v_removed;
        -- Nothing removed: what is left belongs to skipped dependents.
        EXIT WHEN v_removed = 0;
        -- Next round: the ended jobs with edges left, and the dependents
        -- cancelled here that others wait for.
        -- (Each probed on its own: as a join, without nested loops, it read
        -- every edge.)
        v_ended := ARRAY(SELECT e.id
                           FROM pg_catalog.unnest(v_ended || v_cancelled) AS e(id)
                          WHERE (SELECT true FROM taskboard.job_dependencies AS d
                                  WHERE d.depends_on = e.id LIMIT 1));
    END LOOP;

    -- Ended jobs with edges left (the budget spent, or their dependents
    -- locked by others): settled later by recheck_dependencies.
    INSERT INTO taskboard.dependency_checks (job_id, side)
    SELECT e.id, 'dependency'
      FROM pg_catalog.unnest(v_ended) AS e(id)
     WHERE (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = e.id) IN ('succeeded', 'dead', 'cancelled')
       AND (SELECT true FROM taskboard.job_dependencies AS d WHERE d.depends_on = e.id LIMIT 1)
    ON CONFLICT ON CONSTRAINT dependency_checks_pkey DO NOTHING;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.settle_dependents(bigint[]) FROM PUBLIC;
