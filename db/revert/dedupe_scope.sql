-- Revert taskboard:dedupe_scope from pg
--
-- Back to v0.1.0's unique index on (queue, dedupe_key): one unfinished job
-- per queue and key, whatever its task. Unfinished jobs of two tasks that
-- share a queue and a key, which this release allows, block that: the
-- revert then raises 23505 naming the (queue, dedupe_key) pairs, changes
-- nothing, and can be run again once all but one job of each pair has
-- finished or been cancelled. This is the last step of the plan, so a
-- revert to v0.1.0 stops here before anything else is undone.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- Writers wait from here to the COMMIT: no pair can appear between the
-- check and the index build.
LOCK TABLE taskboard.jobs IN SHARE MODE;

DO $revert$
DECLARE
    v_pairs  bigint;
    v_listed text;
BEGIN
    SELECT pg_catalog.count(*),
           pg_catalog.string_agg(pg_catalog.format('(%L, %L)', p.queue, p.dedupe_key), ', '
                                 ORDER BY p.queue, p.dedupe_key) FILTER (WHERE p.n <= 20)
      INTO v_pairs, v_listed
      FROM (SELECT j.queue, j.dedupe_key,
                   pg_catalog.row_number() OVER (ORDER BY j.queue, j.dedupe_key) AS n
              FROM taskboard.jobs AS j
             WHERE j.dedupe_key IS NOT NULL
               AND j.state IN ('queued', 'running')
             GROUP BY j.queue, j.dedupe_key
            HAVING pg_catalog.count(*) > 1) AS p;
    IF v_pairs > 0 THEN
        RAISE EXCEPTION 'cannot revert dedupe_scope: v0.1.0 allows one unfinished job per (queue, dedupe_key), and % such pair(s) are held by unfinished jobs of more than one task: %',
            v_pairs, v_listed || CASE WHEN v_pairs > 20 THEN pg_catalog.format(' and %s more', v_pairs - 20) ELSE '' END
            USING ERRCODE = 'unique_violation',
                  HINT = 'Let all but one job of each pair finish, or cancel them, then revert again.';
    END IF;
END
$revert$;

CREATE UNIQUE INDEX jobs_unfinished_dedupe_key
    ON taskboard.jobs (queue, dedupe_key)
    WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running');

DROP INDEX taskboard.jobs_unfinished_task_dedupe_key;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
