-- renew(job_id, token, lease) -> timestamptz
-- Extends the holder's lease to clock + lease and returns the new deadline,
-- when `token` is current and its lease has not yet expired.
-- NULL: the token is not current (reclaimed, completed, failed, released,
-- cancelled) or its lease already expired; nothing changes and the worker
-- must treat the job as lost.
-- Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
-- or longer than 12 hours ('infinity' included).

-- Written by `make schema` from a fresh deploy (never by hand): the definition
-- is that of db/deploy/, the header above is the function's COMMENT ON FUNCTION.
CREATE OR REPLACE FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval DEFAULT '00:01:00'::interval)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_now      timestamptz := pg_catalog.clock_timestamp();
    v_deadline timestamptz;
BEGIN
    IF renew.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF renew.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_interval('lease', renew.lease, interval '12 hours');

    UPDATE taskboard.jobs AS j
       SET lease_expires_at = v_now + renew.lease
     WHERE j.id = renew.job_id
       AND j.state = 'running'
       AND j.lease_token = renew.token
       AND j.lease_expires_at > v_now
    RETURNING j.lease_expires_at INTO v_deadline;

    RETURN v_deadline;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.renew(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_admin;
