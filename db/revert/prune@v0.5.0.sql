-- Revert taskboard:prune to its v0.4.4 definition (workers may prune again)

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- prune(older_than, batch) -> bigint
-- Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
-- finished_at is before clock - older_than, oldest first, and returns how
-- many it deleted. Call again until it returns 0; small batches keep each
-- transaction short; concurrent callers skip each other's rows.
-- Workers call it too, for their retention setting; only finished jobs are
-- ever deleted.
-- The cutoff is read from the clock once, so the scan of finished jobs
-- stops at it: a call that finds nothing old enough reads next to nothing,
-- however many recent finished jobs the table keeps.
-- Raises 22023 when older_than is NULL, negative or longer than 36500 days
-- (100 years), or batch is NULL or < 1.

CREATE OR REPLACE FUNCTION taskboard.prune(
    older_than interval,
    batch      integer DEFAULT 10000
)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_cutoff  timestamptz;
    v_deleted bigint;
    v_clock   timestamptz := pg_catalog.clock_timestamp();
    v_far     boolean;
BEGIN
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := prune.older_than IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM prune.older_than)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM prune.older_than)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM prune.older_than)) > 17520000);
    IF prune.older_than IS NULL
       OR (v_far AND prune.older_than < interval '0')
       OR (NOT v_far AND v_clock - prune.older_than > v_clock) THEN
        RAISE EXCEPTION 'older_than must not be NULL or negative, got %', prune.older_than
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock - prune.older_than < v_clock - interval '36500 days' THEN
        RAISE EXCEPTION 'older_than must be at most 36500 days (100 years), got %', prune.older_than
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF prune.batch IS NULL OR prune.batch < 1 THEN
        RAISE EXCEPTION 'batch must be at least 1, got %', prune.batch
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A value, not clock_timestamp() in the query: an index scan can stop at it.
    v_cutoff := pg_catalog.clock_timestamp() - prune.older_than;

    WITH doomed AS (
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.finished_at < v_cutoff
           AND j.state IN ('succeeded', 'cancelled', 'dead')
         ORDER BY j.finished_at
         LIMIT prune.batch
           FOR UPDATE SKIP LOCKED
    ),
    deleted AS (
        DELETE FROM taskboard.jobs AS j
         USING doomed AS d
         WHERE j.id = d.id
        RETURNING j.id
    )
    SELECT pg_catalog.count(*) INTO v_deleted FROM deleted;

    RETURN v_deleted;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.prune(interval, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.prune(interval, integer)
    TO :"worker_role", :"admin_role";

COMMENT ON FUNCTION taskboard.prune(interval,integer) IS
$comment$prune(older_than, batch) -> bigint
Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
finished_at is before clock - older_than, oldest first, and returns how
many it deleted. Call again until it returns 0; small batches keep each
transaction short; concurrent callers skip each other's rows.
Workers call it too, for their retention setting; only finished jobs are
ever deleted.
The cutoff is read from the clock once, so the scan of finished jobs
stops at it: a call that finds nothing old enough reads next to nothing,
however many recent finished jobs the table keeps.
Raises 22023 when older_than is NULL, negative or longer than 36500 days
(100 years), by the cutoff it gives: unless clock - 36500 days <= clock -
older_than <= clock, months and days counted as the calendar makes them;
or batch is NULL or < 1.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
