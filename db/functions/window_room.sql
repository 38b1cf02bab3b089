-- window_room(queue, rate_starts, rate_per, clock) -> integer
-- Internal: a picker's bound under a rate limit of the whole queue
-- (taskboard.set_rate_limit without by_key): how many more starts of
-- `queue`, reclaims included, its window of `rate_per` ending at `clock`
-- has room for, at least 0: rate_starts less the starts logged in
-- taskboard.queue_starts after clock - rate_per. Writes nothing.
-- Called by claim, on its turn on the queue's row; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.window_room(queue text, rate_starts integer, rate_per interval, clock timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN (
        SELECT GREATEST(0, window_room.rate_starts - pg_catalog.count(*))::integer
          FROM taskboard.queue_starts AS s
         WHERE s.queue = window_room.queue
           AND s.started_at > window_room.clock - window_room.rate_per);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.window_room(text,integer,interval,timestamp with time zone) FROM PUBLIC;
