-- prune(older_than, batch) -> bigint
-- Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
-- finished_at is before clock - older_than, oldest first, and returns how
-- many it deleted. Call again until it returns 0; small batches keep each
-- transaction short; concurrent callers skip each other's rows.
-- Only finished jobs are ever deleted, and not a job cancelled under a lease
-- that has not ended yet (held_until, see taskboard.cancel) before it ends,
-- nor one whose dependents are not settled yet (taskboard.dependency_checks).
-- Executable by the admin role only:
-- a worker login cannot delete jobs (claim, fail without retry, then prune
-- would erase any due queued job); a worker's retention setting prunes when
-- its login is granted the admin role.
-- The cutoff is read from the clock once, so the scan of finished jobs
-- stops at it: a call that finds nothing old enough reads next to nothing,
-- however many recent finished jobs the table keeps.
-- Raises 22023 when older_than is NULL, negative or longer than 100 years,
-- by the cutoff it gives: unless clock - 100 years <= clock - older_than <=
-- clock, months and days counted as the calendar makes them; or batch is
-- NULL or < 1.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.prune(older_than interval, batch integer DEFAULT 10000)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_cutoff  timestamptz;
    v_deleted bigint;
    v_doomed  bigint[];
BEGIN
    v_checked := taskboard.check_delay('older_than', prune.older_than, '100 years', back => true);
    v_checked := taskboard.check_between('batch', prune.batch, 1);

    -- A value, not clock_timestamp() in the query: an index scan can stop at it.
    v_cutoff := pg_catalog.clock_timestamp() - prune.older_than;

    -- The candidates, locked: no edge to one of them can be written now (an
    -- edge's foreign key waits for this lock).
    v_doomed := ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.finished_at < v_cutoff
           AND j.state IN ('succeeded', 'cancelled', 'dead')
           -- A job cancelled under a live lease holds its place and key
           -- until that lease ends (held_until): deleting it would free them.
           AND (j.held_until IS NULL OR j.held_until <= pg_catalog.clock_timestamp())
         ORDER BY j.finished_at
         LIMIT prune.batch
           FOR UPDATE SKIP LOCKED);

    -- Nor one whose dependents are not all settled yet: its edges would go
    -- with it. Read in a statement of its own, with the rows locked: its
    -- snapshot shows every edge committed before the locks.
    WITH deleted AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_doomed)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id
    )
    SELECT pg_catalog.count(*) INTO v_deleted FROM deleted;

    RETURN v_deleted;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.prune(interval,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.prune(interval,integer) TO taskboard_admin;
