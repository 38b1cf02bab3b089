-- Deploy taskboard:settle_dependents to pg
-- requires: dependencies
-- requires: notify_runnable

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE FUNCTION taskboard.settle_dependents(job_ids bigint[])
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Joins by hash, each side found through the primary key: a nested loop
-- planned for a few waiting jobs made a wide fan-out quadratic.
SET enable_nestloop = off
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The jobs whose edges this round settles: those given, then the
    -- dependents the round before cancelled.
    v_ended bigint[] := settle_dependents.job_ids;
    v_queues text[];
BEGIN
    WHILE pg_catalog.cardinality(v_ended) > 0 LOOP
        WITH gone AS (
            -- The ended jobs' edges, each removed once: a second settle of
            -- the same job finds none (it waits for the first to commit,
            -- then finds them gone).
            DELETE FROM taskboard.job_dependencies AS d
             WHERE d.depends_on = ANY (v_ended)
            RETURNING d.job_id, d.depends_on
        ),
        tally AS (
            -- Per dependent: how many of its dependencies ended here, and
            -- the first of them that did not succeed.
            SELECT g.job_id,
                   pg_catalog.count(*)::integer AS ended,
                   pg_catalog.min(g.depends_on) FILTER (WHERE p.state <> 'succeeded') AS failed
              FROM gone AS g
              JOIN taskboard.jobs AS p ON p.id = g.depends_on
             WHERE p.id = ANY (v_ended)
             GROUP BY g.job_id
        ),
        locked AS MATERIALIZED (
            -- The dependents still waiting, with what ended for each, locked
            -- in id order: two calls settling dependencies of the same jobs
            -- take their locks in the same order.
            SELECT c.id, t.ended, t.failed
              FROM taskboard.jobs AS c
              JOIN tally AS t ON t.job_id = c.id
             WHERE c.id = ANY (ARRAY(SELECT u.job_id FROM tally AS u))
               AND c.state = 'waiting'
             ORDER BY c.id
               FOR NO KEY UPDATE OF c
        ),
        changed AS (
            -- Joined by id to the locked rows: a plan that walked the tally
            -- for each row made a wide fan-out quadratic.
            UPDATE taskboard.jobs AS c
               SET dependencies_left = c.dependencies_left - l.ended,
                   state = CASE
                       WHEN l.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN 'cancelled'
                       WHEN c.dependencies_left - l.ended = 0 THEN 'queued'
                       ELSE 'waiting'
                   END,
                   finished_at = CASE
                       WHEN l.failed IS NOT NULL AND c.on_dependency_failure = 'cancel' THEN v_now
                   END,
                   -- Runnable from its own run_at, or from now when that
                   -- passed while it waited.
                   run_at = CASE
                       WHEN (l.failed IS NULL OR c.on_dependency_failure = 'run')
                            AND c.dependencies_left - l.ended = 0
                       THEN GREATEST(c.run_at, v_now)
                       ELSE c.run_at
                   END,
                   errors = CASE
                       WHEN l.failed IS NOT NULL AND c.on_dependency_failure = 'cancel'
                       THEN c.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                           'error', pg_catalog.format('dependency %s ended %s', l.failed,
                                                      (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = l.failed)),
                           'attempt', c.attempt,
                           'at', v_now))
                       ELSE c.errors
                   END
              FROM locked AS l
             WHERE c.id = l.id
               AND c.id = ANY (ARRAY(SELECT k.id FROM locked AS k))
               AND c.state = 'waiting'
            RETURNING c.id, c.state, c.queue, c.run_at, c.has_dependents
        )
        SELECT pg_catalog.array_agg(x.id) FILTER (WHERE x.state = 'cancelled' AND x.has_dependents),
               pg_catalog.array_agg(DISTINCT x.queue) FILTER (WHERE x.state = 'queued' AND x.run_at <= v_now)
          INTO v_ended, v_queues
          FROM changed AS x;
        PERFORM taskboard.notify_runnable(q.queue)
           FROM pg_catalog.unnest(v_queues) AS q(queue);
    END LOOP;
END
$function$;

COMMENT ON FUNCTION taskboard.settle_dependents(bigint[]) IS
$comment$settle_dependents(job_ids) -> void
Internal: settles what the end of each job of `job_ids` (succeeded, dead
or cancelled, in the caller's transaction) means for the jobs waiting on
it. Its edges are removed; a dependent whose last dependency ended
successfully becomes queued, runnable from its run_at or now, whichever
is later (NOTIFY taskboard, '<queue>' when runnable now); one whose
dependency ended dead or cancelled becomes cancelled, with an error
'dependency N ended dead' (or cancelled), and its own dependents after it,
unless it was enqueued with on_dependency_failure 'run': then the
dependency counts as ended like a success. A job whose edges were settled
already, or that has none, changes nothing. Called by complete,
complete_many, fail, cancel and claim; never granted to an application
role. Raises nothing.$comment$;

REVOKE ALL ON FUNCTION taskboard.settle_dependents(bigint[]) FROM PUBLIC;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
