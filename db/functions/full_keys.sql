-- full_keys(queue, max_running_per_key, clock) -> text[]
-- Internal: a picker's bound under a key limit (taskboard.set_key_limit):
-- the concurrency keys of `queue` whose holders fill it by `clock`. A
-- holder is a running job (an expired lease counts until its job is
-- reclaimed or finished) or one cancelled under a lease not yet ended. No
-- queued job of theirs is started; the others' are. Writes nothing.
-- Called by claim, on its turn on the queue's row; never granted to an
-- application role.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.full_keys(queue text, max_running_per_key integer, clock timestamp with time zone)
 RETURNS text[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RETURN ARRAY(
        SELECT h.concurrency_key
          FROM taskboard.jobs AS h
         WHERE h.queue = full_keys.queue
           AND h.concurrency_key IS NOT NULL
           AND (h.state = 'running' OR h.held_until > full_keys.clock)
         GROUP BY h.concurrency_key
        HAVING pg_catalog.count(*) >= full_keys.max_running_per_key);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.full_keys(text,integer,timestamp with time zone) FROM PUBLIC;
