-- pick_keyed(queue, clock, room, full_keys, max_running_per_key, rate_starts, rate_per, rate_by_key, reclaims) -> bigint[]
-- Internal: a picker of taskboard.claim, per concurrency key (under a key
-- limit or a rate limit per key). Reads the queued jobs of `queue` due by
-- `clock` whose key is not in `full_keys` (a hashed set: the queued jobs
-- of full keys are read past), and those without a key, sixteen times
-- `room` of them in claim order (priority, higher first, then run_at, then
-- id), without a lock (the queue's claimers take turns on its row), so that
-- the jobs of keys with room behind many of one key are still found. Takes
-- each key's first ones up to its room: max_running_per_key less its
-- holders (running, or cancelled under a lease not yet ended), and under a
-- rate per key the starts left in its window less the claim's `reclaims`
-- of that key; at most `room` in all, then locks them FOR NO KEY UPDATE
-- SKIP LOCKED and keeps those still queued (a cancel may have come first).
-- Writes nothing; the rows it locked stay locked until the caller's
-- transaction ends.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.pick_keyed(queue text, clock timestamp with time zone, room integer, full_keys text[], max_running_per_key integer, rate_starts integer, rate_per interval, rate_by_key boolean, reclaims bigint[])
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN ARRAY(
        WITH keyed AS MATERIALIZED (
            SELECT j.id, j.priority, j.run_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.state = 'queued'
               AND j.queue = pick_keyed.queue
               -- A hashed set: the queued jobs of full keys are read past
               -- (a key with a long backlog has many), each looked up once.
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (SELECT f.key FROM pg_catalog.unnest(pick_keyed.full_keys) AS f(key)))
               AND j.run_at <= pick_keyed.clock
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT 16 * pick_keyed.room
        ),
        rooms AS MATERIALIZED (
            -- Under a rate per key: the starts left in each key's window.
            SELECT r.ck, pick_keyed.rate_starts - (
                       SELECT pg_catalog.count(*)
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = pick_keyed.queue
                          AND s.concurrency_key = r.ck
                          AND s.started_at > pick_keyed.clock - pick_keyed.rate_per) AS room
              FROM (SELECT DISTINCT k.ck FROM keyed AS k) AS r
             WHERE pick_keyed.rate_by_key
               AND r.ck IS NOT NULL
        ),
        reclaimed AS MATERIALIZED (
            -- Under a rate per key: the claim's reclaims of each key.
            SELECT x.concurrency_key AS ck, pg_catalog.count(*) AS n
              FROM taskboard.jobs AS x
             WHERE pick_keyed.rate_by_key
               AND x.id = ANY (pick_keyed.reclaims)
               AND x.concurrency_key IS NOT NULL
             GROUP BY x.concurrency_key
        ),
        picked AS MATERIALIZED (
            SELECT n.id
              FROM (SELECT k.id, k.priority, k.run_at, k.ck,
                           pg_catalog.row_number() OVER (PARTITION BY k.ck ORDER BY k.priority DESC, k.run_at, k.id) AS nth
                      FROM keyed AS k) AS n
             WHERE n.ck IS NULL
                OR ((pick_keyed.max_running_per_key IS NULL
                     OR n.nth <= pick_keyed.max_running_per_key - (
                            SELECT pg_catalog.count(*)
                              FROM taskboard.jobs AS h
                             WHERE h.queue = pick_keyed.queue
                               AND h.concurrency_key = n.ck
                               AND (h.state = 'running' OR h.held_until > pick_keyed.clock)))
                    AND (NOT pick_keyed.rate_by_key
                         OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck)
                                     - coalesce((SELECT c.n FROM reclaimed AS c WHERE c.ck = n.ck), 0)))
             ORDER BY n.priority DESC, n.run_at, n.id
             LIMIT pick_keyed.room
        ),
        locked AS MATERIALIZED (
            -- Found by id alone: with the queue or the state in this test,
            -- the plan kept from an empty table walked the queue's whole
            -- queued index on PostgreSQL 15. The locked row is the newest
            -- version.
            SELECT j.id, j.state
              FROM taskboard.jobs AS j
             WHERE j.id = ANY (ARRAY(SELECT p.id FROM picked AS p))
               FOR NO KEY UPDATE SKIP LOCKED
        )
        SELECT l.id FROM locked AS l WHERE l.state = 'queued');
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pick_keyed(text,timestamp with time zone,integer,text[],integer,integer,interval,boolean,bigint[]) FROM PUBLIC;
