-- release(job_id, token, delay) -> boolean
-- The holder hands the job back, typically at shutdown: it is queued again
-- at clock + delay and this claim is not counted as an attempt. Sends
-- NOTIFY taskboard, '<queue>' when delay is zero.
-- true:  released.
-- false: the token is not current; nothing changes.
-- Raises 22023 when job_id or token is NULL, or delay is NULL, negative or
-- longer than 12 hours ('infinity' included), by the time it gives: unless
-- clock <= clock + delay <= clock + 12 hours, months and days counted as
-- the calendar makes them.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.release(job_id bigint, token uuid, delay interval DEFAULT '00:00:00'::interval)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_queue text;
BEGIN
    v_checked := taskboard.check_lease(release.job_id, release.token);
    v_checked := taskboard.check_delay('delay', release.delay, '12 hours');

    UPDATE taskboard.jobs AS j
       SET state = 'queued',
           run_at = pg_catalog.clock_timestamp() + release.delay,
           attempt = j.attempt - 1
     WHERE j.id = release.job_id
       AND j.state = 'running'
       AND j.lease_token = release.token
    RETURNING j.queue INTO v_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;

    IF release.delay = interval '0' THEN
        PERFORM taskboard.notify_runnable(v_queue);
    END IF;
    RETURN true;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.release(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.release(bigint,uuid,interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.release(bigint,uuid,interval) TO taskboard_admin;
