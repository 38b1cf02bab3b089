-- rate_full_keys(queue, clock, room, full_keys, known, rate_starts, rate_per) -> text[]
-- Internal: a picker's bound under a rate limit per key
-- (taskboard.set_rate_limit with by_key): `known` and the keys of `queue`
-- whose window is full by `clock` (none of their jobs starts, an expired
-- lease of theirs is not reclaimed), among those a round with `room` would
-- look at: the keys of the first queued jobs it reads, as pick_keyed reads
-- them, and of the expired leases it may reclaim, each key's window
-- counted through its index (at most rate_starts of its starts). A look
-- reads the first 16 x room queued jobs in claim order, those of the keys
-- of `full_keys` and those found full so far left out (a hashed set: read
-- past, not counted again), and counts the windows of their keys once
-- each. While fewer than sixteen times the room of the jobs it read are of
-- keys with room (or of none), and the queue has more, it looks again
-- twice as far: the jobs of keys with room behind full ones are still
-- reached, no key's window is counted that the claim does not reach, and
-- however many full keys are ahead, the looks together read fewer than
-- eight times the queued jobs up to the last one pick_keyed takes (each
-- look at most twice as many as it reaches, the last less than twice as
-- far as needed). Writes nothing.
-- Called by claim, on its turn on the queue's row; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.rate_full_keys(queue text, clock timestamp with time zone, room integer, full_keys text[], known text[], rate_starts integer, rate_per interval)
 RETURNS text[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_full text[] := rate_full_keys.known;
    -- A look: how many queued jobs it reads, the keys it found full, the
    -- jobs it read and those of them of keys with room or without a key.
    v_reach bigint := 16 * rate_full_keys.room;
    v_new_full text[];
    v_read bigint;
    v_open bigint;
BEGIN
    LOOP
        WITH reached AS MATERIALIZED (
            SELECT j.concurrency_key AS ck
              FROM taskboard.jobs AS j
             WHERE j.queue = rate_full_keys.queue
               AND j.state = 'queued'
               AND j.run_at <= rate_full_keys.clock
               AND (j.concurrency_key IS NULL
                    OR j.concurrency_key NOT IN (
                        SELECT f.key
                          FROM pg_catalog.unnest(pg_catalog.array_cat(rate_full_keys.full_keys, v_full)) AS f(key)))
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT v_reach
        ),
        filled AS MATERIALIZED (
            SELECT c.ck
              FROM (SELECT r.ck
                      FROM reached AS r
                     WHERE r.ck IS NOT NULL
                    UNION
                    SELECT x.concurrency_key
                      FROM taskboard.jobs AS x
                     WHERE x.queue = rate_full_keys.queue
                       AND x.state = 'running'
                       AND x.lease_expires_at <= rate_full_keys.clock
                       AND x.attempt < x.max_attempts
                       AND x.concurrency_key IS NOT NULL
                       AND x.concurrency_key NOT IN (
                           SELECT f.key FROM pg_catalog.unnest(v_full) AS f(key))) AS c
             WHERE (SELECT pg_catalog.count(*)
                      FROM (SELECT
                              FROM taskboard.queue_starts AS s
                             WHERE s.queue = rate_full_keys.queue
                               AND s.concurrency_key = c.ck
                               AND s.started_at > rate_full_keys.clock - rate_full_keys.rate_per
                             LIMIT rate_full_keys.rate_starts) AS w) >= rate_full_keys.rate_starts
        )
        SELECT ARRAY(SELECT f.ck FROM filled AS f),
               (SELECT pg_catalog.count(*) FROM reached AS r),
               (SELECT pg_catalog.count(*)
                  FROM reached AS r
                 WHERE r.ck IS NULL
                    OR r.ck NOT IN (SELECT f.ck FROM filled AS f))
          INTO v_new_full, v_read, v_open;
        v_full := pg_catalog.array_cat(v_full, v_new_full);
        EXIT WHEN v_open >= 16 * rate_full_keys.room OR v_read < v_reach;
        v_reach := 2 * v_reach;
    END LOOP;
    RETURN v_full;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.rate_full_keys(text,timestamp with time zone,integer,text[],text[],integer,interval) FROM PUBLIC;
