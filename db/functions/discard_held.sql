-- discard_held(job_ids, tokens) -> table of (job_id, token)
-- Internal: the delete of taskboard.complete_many for the jobs of discarding
-- queues (taskboard.set_queue_discard). Deletes each job of job_ids[i] that
-- is running under tokens[i] in a queue that discards, unless a job waits
-- on it or another transaction holds a lock on it, and answers each job it
-- deleted with the token that held it. When the call holds such a job and
-- more than one job, every job it holds is first locked in job_id order
-- with the lock the completion's update takes (FOR NO KEY UPDATE), the
-- order renew_many locks them in; the delete's own lock (FOR UPDATE) is then
-- taken only where nobody else holds one (SKIP LOCKED), so it waits for
-- nothing. An enqueue naming the job in depends_on holds it FOR KEY SHARE:
-- held before, the job is skipped and kept; asked for after, it waits for
-- this transaction and then finds no job. The edges are read in a
-- statement after those locks, so every edge committed before is seen.
-- Checks nothing: complete_many checked the arguments, and calls it only in
-- READ COMMITTED, when a queue discards. Never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.discard_held(job_ids bigint[], tokens uuid[])
 RETURNS TABLE(job_id bigint, token uuid)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_locked bigint[];
BEGIN
    IF NOT EXISTS (SELECT
                     FROM unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token)
                     JOIN taskboard.jobs AS j ON j.id = u.id
                    WHERE j.lease_token = u.token
                      AND j.state = 'running'
                      AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)) THEN
        RETURN;
    END IF;
    IF pg_catalog.cardinality(discard_held.job_ids) > 1 THEN
        PERFORM
           FROM taskboard.jobs AS j
           JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
          WHERE j.id = ANY (discard_held.job_ids)
            AND j.lease_token = u.token
            AND j.state = 'running'
          ORDER BY j.id
            FOR NO KEY UPDATE OF j;
    END IF;
    v_locked := ARRAY(SELECT j.id
                        FROM taskboard.jobs AS j
                        JOIN unnest(discard_held.job_ids, discard_held.tokens) AS u(id, token) ON j.id = u.id
                       WHERE j.id = ANY (discard_held.job_ids)
                         AND j.lease_token = u.token
                         AND j.state = 'running'
                         AND j.queue IN (SELECT q.queue FROM taskboard.queues AS q WHERE q.discard_succeeded)
                       ORDER BY j.id
                         FOR UPDATE OF j SKIP LOCKED);
    RETURN QUERY
    WITH gone AS (
        DELETE FROM taskboard.jobs AS j
         WHERE j.id = ANY (v_locked)
           AND NOT EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
        RETURNING j.id, j.lease_token
    )
    SELECT gone.id, gone.lease_token FROM gone;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.discard_held(bigint[],uuid[]) FROM PUBLIC;
