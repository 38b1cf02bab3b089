-- pick_queued(queue, clock, most) -> bigint[]
-- Internal: a picker of taskboard.claim. The first `most` queued jobs of
-- `queue` whose run_at is due by `clock`, in claim order (priority, higher
-- first, then run_at, then id), locked FOR NO KEY UPDATE SKIP LOCKED: a
-- job another claimer holds is passed over. Writes nothing; the rows stay
-- locked until the caller's transaction ends. Reads the head of the
-- queue's queued index only.
-- Called by claim; never granted to an application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.pick_queued(queue text, clock timestamp with time zone, most integer)
 RETURNS bigint[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN ARRAY(
        SELECT j.id
          FROM taskboard.jobs AS j
         WHERE j.queue = pick_queued.queue
           AND j.state = 'queued'
           AND j.run_at <= pick_queued.clock
         ORDER BY j.priority DESC, j.run_at, j.id
         LIMIT pick_queued.most
           FOR NO KEY UPDATE SKIP LOCKED);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pick_queued(text,timestamp with time zone,integer) FROM PUBLIC;
