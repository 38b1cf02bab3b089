-- resume(queue) -> boolean
-- Resumes a paused `queue`: claim hands out its jobs again, and listeners
-- are told when one is runnable now (NOTIFY, unless taskboard.notify =
-- off). True when this call resumed it, false when it was not paused.
-- Raises 22023 when queue is NULL, empty or longer than 200 characters.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.resume(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_name('queue', resume.queue);

    UPDATE taskboard.queues AS q
       SET paused = false,
           updated_at = pg_catalog.clock_timestamp()
     WHERE q.queue = resume.queue
       AND q.paused;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM taskboard.jobs AS j
                WHERE j.queue = resume.queue AND j.state = 'queued'
                  AND j.run_at <= pg_catalog.clock_timestamp()) THEN
        PERFORM taskboard.notify_runnable(resume.queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.resume(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.resume(text) TO taskboard_admin;
