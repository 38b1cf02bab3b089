-- notify_runnable(queue) -> void
-- Internal: tells listeners that `queue` has a job runnable now, by
-- NOTIFY taskboard, '<queue>'. Called by enqueue, enqueue_many, release
-- (without delay) and retry; never granted to an application role.
-- A database or role setting taskboard.notify = off (or false, no, 0)
-- turns notifications off for deployments that prefer pure polling: NOTIFY
-- serialises notifying transactions on a cluster-wide lock at commit.
-- Raises nothing.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.notify_runnable(queue text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF pg_catalog.lower(pg_catalog.current_setting('taskboard.notify', true))
           IN ('off', 'false', 'no', '0') THEN
        RETURN;
    END IF;
    PERFORM pg_catalog.pg_notify('taskboard', notify_runnable.queue);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.notify_runnable(text) FROM PUBLIC;
