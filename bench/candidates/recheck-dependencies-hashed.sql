-- CANDIDATE (bench/run.py --taskboard-sql), not deployed by Sqitch: measured
-- with W12 (bench/README.md, "Big graphs"), for whoever changes db/.
-- Why the first claim after an enqueue naming 100,000 dependencies took 48 s
-- (10,000: 0.44 s; 1,000: 15 ms: quadratic): recheck_dependencies keeps a
-- dependent's check row while one of its edges names a dependency it did not
-- read, tested as "d.depends_on <> ALL (v_read)" for each edge, a walk of the
-- whole array: 100,000 edges against 100,000 ids. Here the same test is one
-- hashed EXCEPT. db/deploy/recheck_dependencies.sql otherwise as it is.
CREATE OR REPLACE FUNCTION taskboard.recheck_dependencies(max_rows integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_checks bigint[];
    v_named bigint[];
    v_read bigint[];
    v_ended bigint[];
    v_done integer;
    v_ended_job bigint;
BEGIN
    -- Only a statement's own snapshot shows every edge committed before it.
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN 0;
    END IF;

    -- Jobs whose edges an enqueue or a retry wrote, oldest first; rows
    -- another call is working on are left to it.
    v_checks := ARRAY(SELECT c.job_id
                        FROM taskboard.dependency_checks AS c
                       WHERE c.side = 'dependent'
                       ORDER BY c.added_at, c.job_id
                       LIMIT recheck_dependencies.max_rows
                         FOR UPDATE SKIP LOCKED);
    v_done := pg_catalog.cardinality(v_checks);
    IF v_done > 0 THEN
        -- (Read through the primary key, then made distinct: a DISTINCT
        -- over the edges was planned as a walk of every edge in order.)
        v_named := ARRAY(SELECT DISTINCT n.id
                           FROM pg_catalog.unnest(ARRAY(SELECT d.depends_on
                                                          FROM taskboard.job_dependencies AS d
                                                         WHERE d.job_id = ANY (v_checks))) AS n(id)
                          ORDER BY n.id);
        -- Each dependency they name, read with the lock that a write of its
        -- row in flight holds against it (FOR SHARE), skipped while one is:
        -- its latest committed state is then its state. The locks are given
        -- back at once (the block is rolled back): no holder's write ever
        -- waits for this call's transaction.
        BEGIN
            WITH r AS MATERIALIZED (
                SELECT p.id, p.state
                  FROM taskboard.jobs AS p
                 WHERE p.id = ANY (v_named)
                 ORDER BY p.id
                   FOR SHARE SKIP LOCKED
            )
            SELECT ARRAY(SELECT r.id FROM r ORDER BY r.id),
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
        -- A job each of whose dependencies was read (none with a write in
        -- flight) is done: each one not ended is named by a committed edge,
        -- which its end will see; each one ended was settled above.
        DELETE FROM taskboard.dependency_checks AS c
         WHERE c.side = 'dependent'
           AND c.job_id = ANY (v_checks)
           AND NOT EXISTS (SELECT d.depends_on
                             FROM taskboard.job_dependencies AS d
                            WHERE d.job_id = c.job_id
                           EXCEPT
                           SELECT r.id FROM pg_catalog.unnest(v_read) AS r(id));
    END IF;

    -- One job that ended with dependents left: 1000 more of its edges.
    SELECT c.job_id
      INTO v_ended_job
      FROM taskboard.dependency_checks AS c
     WHERE c.side = 'dependency'
     ORDER BY c.added_at, c.job_id
     LIMIT 1
       FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        PERFORM taskboard.settle_dependents(ARRAY[v_ended_job]);
        -- Settled to the last edge, or the job is not ended (retried):
        -- its next end settles the edges it has then.
        IF NOT EXISTS (SELECT
                         FROM taskboard.job_dependencies AS d
                         JOIN taskboard.jobs AS p ON p.id = d.depends_on
                        WHERE d.depends_on = v_ended_job
                          AND p.state IN ('succeeded', 'dead', 'cancelled')) THEN
            DELETE FROM taskboard.dependency_checks AS c
             WHERE c.job_id = v_ended_job AND c.side = 'dependency';
        END IF;
        v_done := v_done + 1;
    END IF;
    RETURN v_done;
END
$function$;
