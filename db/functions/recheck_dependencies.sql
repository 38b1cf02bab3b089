-- recheck_dependencies(max_rows) -> integer
-- Internal: works through taskboard.dependency_checks and returns how many
-- of its rows it worked on. Up to `max_rows` jobs whose edges an enqueue
-- wrote (side dependent), oldest first, as many as name 10000 dependencies
-- in all (at least one job): each dependency they name that has ended by
-- now is settled (settle_dependents), and a job's row goes once every
-- dependency it names was read with no write of it in flight; the others
-- go to the back of the line. Then up to 5 jobs that ended with dependents
-- left (side dependency): 1000 more edges of each are settled, a row goes
-- with its last edge, and one with edges left goes to the back of the line.
-- Rows another call is working on are skipped. Waits for no lock that a
-- holder's write takes, and keeps none past its statement: a dependency
-- read while a write of it is in flight is read again by a later call.
-- Does nothing in a transaction that is not READ COMMITTED (a claim there
-- leaves the rows to claims in READ COMMITTED, as the driver's are). Called
-- by claim; never granted to an application role. Raises nothing.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.recheck_dependencies(max_rows integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- The dependencies one call reads for the jobs whose edges were written
    -- (at least those of one job), and the ended jobs it settles further.
    c_named_budget constant integer := 10000;
    c_ended_rows constant integer := 5;
    v_checks bigint[];
    v_named bigint[];
    v_read bigint[];
    v_ended bigint[];
    v_skipped bigint[];
    v_done integer := 0;
    v_ended_job bigint;
BEGIN
    -- Only a statement's own snapshot shows every edge committed before it.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN 0;
    END IF;

    -- Jobs whose edges an enqueue wrote, oldest first, as many as name
    -- c_named_budget dependencies in all (a job's count of dependencies
    -- left is its count of edges); rows another call works on are left to it.
    v_checks := ARRAY(SELECT c.job_id
                        FROM taskboard.dependency_checks AS c
                       WHERE c.side = 'dependent'
                       ORDER BY c.added_at, c.job_id
                       LIMIT recheck_dependencies.max_rows
                         FOR UPDATE SKIP LOCKED);
    v_checks := ARRAY(SELECT k.id
                        FROM (SELECT k.id, k.ord,
                                     pg_catalog.sum(coalesce((SELECT j.dependencies_left
                                                                FROM taskboard.jobs AS j
                                                               WHERE j.id = k.id), 0))
                                         OVER (ORDER BY k.ord) AS named
                                FROM pg_catalog.unnest(v_checks) WITH ORDINALITY AS k(id, ord)) AS k
                       WHERE k.named <= c_named_budget OR k.ord = 1
                       ORDER BY k.ord);
    IF pg_catalog.cardinality(v_checks) > 0 THEN
        -- (Read through the primary key, then made distinct: a DISTINCT
        -- over the edges was planned as a walk of every edge in order.)
        v_named := ARRAY(SELECT DISTINCT n.id
                           FROM pg_catalog.unnest(ARRAY(SELECT d.depends_on
                                                          FROM taskboard.job_dependencies AS d
                                                         WHERE d.job_id = ANY (v_checks))) AS n(id)
                          ORDER BY n.id);
        -- Each dependency they name, read with the lock that a write of its
        -- row in flight holds against it (FOR SHARE), skipped while one is:
        -- its latest committed state is then its state, and an end still to
        -- come reads its edges in a statement after its own lock, so it sees
        -- the committed edge. The locks are given back at once (the block is
        -- rolled back): no holder's write waits past this statement.
        BEGIN
            WITH r AS MATERIALIZED (
                SELECT p.id, p.state
                  FROM taskboard.jobs AS p
                 WHERE p.id = ANY (v_named)
                 ORDER BY p.id
                   FOR SHARE SKIP LOCKED
            )
            SELECT ARRAY(SELECT r.id FROM r),
                   ARRAY(SELECT r.id FROM r
                          WHERE r.state IN ('succeeded', 'dead', 'cancelled')
                          ORDER BY r.id)
              INTO v_read, v_ended;
            RAISE EXCEPTION USING ERRCODE = 'TB000';
        EXCEPTION
            WHEN SQLSTATE 'TB000' THEN NULL;
        END;
        IF pg_catalog.cardinality(v_ended) > 0 THEN
            PERFORM taskboard.settle_dependents(v_ended);
        END IF;
        -- The dependencies skipped (a write in flight), as a set difference.
        v_skipped := ARRAY(SELECT pg_catalog.unnest(v_named)
                           EXCEPT
                           SELECT pg_catalog.unnest(v_read));
        -- A job none of whose dependencies was skipped is done: each one not
        -- ended is named by a committed edge, which its end will see; each
        -- one ended was settled above. The others go to the back of the
        -- line, to be read again.
        DELETE FROM taskboard.dependency_checks AS c
         WHERE c.side = 'dependent'
           AND c.job_id = ANY (v_checks)
           AND (pg_catalog.cardinality(v_skipped) = 0
                OR NOT EXISTS (SELECT
                                 FROM taskboard.job_dependencies AS d
                                WHERE d.job_id = c.job_id
                                  AND d.depends_on = ANY (v_skipped)));
        UPDATE taskboard.dependency_checks AS c
           SET added_at = pg_catalog.clock_timestamp()
         WHERE c.side = 'dependent'
           AND c.job_id = ANY (v_checks);
        v_done := pg_catalog.cardinality(v_checks);
    END IF;

    -- A few jobs that ended with dependents left: 1000 more edges of each.
    -- One whose edges are not all settled (the budget spent, or dependents
    -- another transaction holds) goes to the back of the line: it holds up
    -- no other.
    FOR v_ended_job IN
        SELECT c.job_id
          FROM taskboard.dependency_checks AS c
         WHERE c.side = 'dependency'
         ORDER BY c.added_at, c.job_id
         LIMIT c_ended_rows
           FOR UPDATE SKIP LOCKED
    LOOP
        PERFORM taskboard.settle_dependents(ARRAY[v_ended_job]);
        -- Settled to the last edge, or the job is not ended (retried): its
        -- next end settles the edges it has then.
        IF (SELECT p.state FROM taskboard.jobs AS p WHERE p.id = v_ended_job)
               IN ('succeeded', 'dead', 'cancelled')
           AND (SELECT true FROM taskboard.job_dependencies AS d
                 WHERE d.depends_on = v_ended_job LIMIT 1) THEN
            UPDATE taskboard.dependency_checks AS c
               SET added_at = pg_catalog.clock_timestamp()
             WHERE c.job_id = v_ended_job AND c.side = 'dependency';
        ELSE
            DELETE FROM taskboard.dependency_checks AS c
             WHERE c.job_id = v_ended_job AND c.side = 'dependency';
        END IF;
        v_done := v_done + 1;
    END LOOP;
    RETURN v_done;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.recheck_dependencies(integer) FROM PUBLIC;
