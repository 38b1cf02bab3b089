-- pause(queue) -> boolean
-- Pauses `queue`: from the next claim on, claim hands out nothing from it.
-- Its running jobs carry on, renew, complete and fail as usual; its queued
-- jobs wait. A queue needs no declaration: pausing one that has no jobs yet
-- works. True when this call paused it, false when it already was paused.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.pause(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', pause.queue);

    INSERT INTO taskboard.queues AS q (queue, paused)
    VALUES (pause.queue, true)
    ON CONFLICT ON CONSTRAINT queues_pkey DO UPDATE
       SET paused = true,
           updated_at = pg_catalog.clock_timestamp()
     WHERE NOT q.paused;
    RETURN FOUND;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.pause(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.pause(text) TO taskboard_admin;
