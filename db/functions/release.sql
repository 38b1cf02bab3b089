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
    v_queue text;
    v_clock timestamptz := pg_catalog.clock_timestamp();
    v_far   boolean;
BEGIN
    IF release.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF release.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- A part (months, days, time) beyond 2000 years could carry the clock out
    -- of the timestamp range: such a value is judged by its sign alone.
    v_far := release.delay IS NOT NULL
             AND (pg_catalog.abs(EXTRACT(year FROM release.delay)) > 2000
             OR pg_catalog.abs(EXTRACT(day FROM release.delay)) > 730000
             OR pg_catalog.abs(EXTRACT(hour FROM release.delay)) > 17520000);
    IF release.delay IS NULL
       OR (v_far AND release.delay < interval '0')
       OR (NOT v_far AND v_clock + release.delay < v_clock) THEN
        RAISE EXCEPTION 'delay must not be NULL or negative, got %', release.delay
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_far OR v_clock + release.delay > v_clock + interval '12 hours' THEN
        RAISE EXCEPTION 'delay must be at most 12 hours, got %', release.delay
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

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
