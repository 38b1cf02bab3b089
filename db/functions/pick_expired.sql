-- pick_expired(queue, clock, most, rate_full_keys, rate_starts, rate_per, rate_by_key) -> bigint[]
-- Internal: a picker of taskboard.claim, the reclaims. The first `most`
-- running jobs of `queue` whose lease expired by `clock` with an attempt
-- left, in claim order (priority, higher first, then run_at, then id),
-- locked FOR NO KEY UPDATE SKIP LOCKED, those of the keys in
-- `rate_full_keys` left out. Under a rate limit per key (rate_by_key), a
-- key's first ones only, up to the starts left in its window of rate_per
-- (rate_starts less its starts logged in taskboard.queue_starts), counted
-- once per key. Writes nothing; the rows it locked stay locked until the
-- caller's transaction ends. Reads this queue's running jobs only.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.pick_expired(queue text, clock timestamp with time zone, most integer, rate_full_keys text[], rate_starts integer, rate_per interval, rate_by_key boolean)
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN ARRAY(
        WITH expired AS MATERIALIZED (
            SELECT j.id, j.priority, j.run_at, j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.queue = pick_expired.queue
               AND j.state = 'running'
               AND j.lease_expires_at <= pick_expired.clock
               AND j.attempt < j.max_attempts
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (
                        SELECT f.key FROM pg_catalog.unnest(pick_expired.rate_full_keys) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT pick_expired.most
               FOR NO KEY UPDATE SKIP LOCKED
        ),
        rooms AS MATERIALIZED (
            SELECT r.ck, pick_expired.rate_starts - (
                       SELECT pg_catalog.count(*)
                         FROM taskboard.queue_starts AS s
                        WHERE s.queue = pick_expired.queue
                          AND s.concurrency_key = r.ck
                          AND s.started_at > pick_expired.clock - pick_expired.rate_per) AS room
              FROM (SELECT DISTINCT e.ck FROM expired AS e) AS r
             WHERE pick_expired.rate_by_key
               AND r.ck IS NOT NULL
        )
        SELECT n.id
          FROM (SELECT e.id, e.ck,
                       pg_catalog.row_number() OVER (PARTITION BY e.ck ORDER BY e.priority DESC, e.run_at, e.id) AS nth
                  FROM expired AS e) AS n
         WHERE NOT pick_expired.rate_by_key
            OR n.ck IS NULL
            OR n.nth <= (SELECT r.room FROM rooms AS r WHERE r.ck = n.ck));
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pick_expired(text,timestamp with time zone,integer,text[],integer,interval,boolean) FROM PUBLIC;
