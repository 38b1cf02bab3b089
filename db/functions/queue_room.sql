-- queue_room(queue, max_running, clock) -> integer
-- Internal: a picker's bound under a queue limit (taskboard.set_queue_limit):
-- how many more jobs of `queue` may start by `clock`, at least 0. The
-- limit less the queue's running jobs (an expired lease counts until its
-- job is reclaimed or finished; one with no attempt left does not, claim
-- buries it) and less the places still held: jobs cancelled under a live
-- lease (taskboard.cancel), or retried since and not yet due. Reads this
-- queue's running and held jobs only; writes nothing.
-- Called by claim, on its turn on the queue's row; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.queue_room(queue text, max_running integer, clock timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN (
        SELECT GREATEST(0, queue_room.max_running - pg_catalog.count(*) - (
                   SELECT pg_catalog.count(*)
                     FROM taskboard.jobs AS h
                    WHERE h.queue = queue_room.queue
                      AND h.held_until > queue_room.clock
                      AND h.state <> 'running'))::integer
          FROM taskboard.jobs AS j
         WHERE j.queue = queue_room.queue
           AND j.state = 'running'
           AND NOT (j.lease_expires_at <= queue_room.clock AND j.attempt >= j.max_attempts));
END
$function$;

REVOKE ALL ON FUNCTION taskboard.queue_room(text,integer,timestamp with time zone) FROM PUBLIC;
