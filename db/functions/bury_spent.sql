-- bury_spent(queue, clock) -> void
-- Internal: a picker of taskboard.claim, the one that takes nothing. The
-- running jobs of `queue` whose lease expired by `clock` with no attempt
-- left become dead (finished_at = clock, error 'lease expired' with their
-- attempt and worker), never handed out; one another transaction holds is
-- passed over (SKIP LOCKED). The jobs waiting on them are settled in this
-- transaction (taskboard.settle_dependents), found from the buried rows
-- themselves (a dependent enqueued while the claim ran is among them).
-- Reads only this queue's running jobs, and writes no lease.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.bury_spent(queue text, clock timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_buried bigint[];
BEGIN
    IF NOT EXISTS (
        SELECT
          FROM taskboard.jobs AS x
         WHERE x.queue = bury_spent.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= bury_spent.clock
           AND x.attempt >= x.max_attempts) THEN
        RETURN;
    END IF;
    WITH doomed AS MATERIALIZED (
        -- Locked once per call: an IN (subquery ... FOR NO KEY UPDATE) was
        -- planned to rerun per running row.
        SELECT x.id
          FROM taskboard.jobs AS x
         WHERE x.queue = bury_spent.queue
           AND x.state = 'running'
           AND x.lease_expires_at <= bury_spent.clock
           AND x.attempt >= x.max_attempts
           FOR NO KEY UPDATE SKIP LOCKED
    ),
    buried AS (
        -- Found by id among this queue's running jobs: a plan made while
        -- the table was empty walks the running jobs' index, and without
        -- the queue it would walk every queue's.
        UPDATE taskboard.jobs AS j
           SET state = 'dead',
               finished_at = bury_spent.clock,
               errors = j.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                   'error', 'lease expired',
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', bury_spent.clock))
         WHERE j.id = ANY (ARRAY(SELECT d.id FROM doomed AS d))
           AND j.queue = bury_spent.queue
           AND j.state = 'running'
        RETURNING j.id
    )
    SELECT ARRAY(SELECT b.id FROM buried AS b) INTO v_buried;
    -- Their dependents, read in a statement of its own with the rows
    -- locked: this snapshot shows every edge committed before the locks.
    v_buried := ARRAY(SELECT b.id FROM pg_catalog.unnest(v_buried) AS b(id)
                       WHERE EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = b.id)
                          OR pg_catalog.current_setting('transaction_isolation') <> 'read committed');
    IF pg_catalog.cardinality(v_buried) > 0 THEN
        PERFORM taskboard.settle_dependents(v_buried);
    END IF;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.bury_spent(text,timestamp with time zone) FROM PUBLIC;
