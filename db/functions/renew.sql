-- renew(job_id, token, lease) -> timestamptz
-- Extends the holder's lease to clock + lease and returns the new deadline,
-- when `token` is current and its lease has not yet expired.
-- NULL: the token is not current (reclaimed, completed, failed, released,
-- cancelled) or its lease already expired; the job does not change and the worker
-- must treat the job as lost.
-- A refused write by a holder whose lease was reclaimed or cancelled is a
-- line of the job's history (taskboard.job_history), once per token and
-- kind; a token the history does not know is not recorded. The line is
-- written in the caller's transaction: a caller that rolls back keeps none.
-- Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
-- or longer than 12 hours ('infinity' included).

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
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
    IF v_deadline IS NOT NULL THEN
        RETURN v_deadline;
    END IF;

    -- Refused. A token the history knows (its lease was reclaimed or
    -- cancelled) is recorded once per token; any other token is not.
    INSERT INTO taskboard.job_events
           (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT e.job_id, 'refused_renew', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
      FROM taskboard.job_events AS e
     WHERE e.job_id = renew.job_id
       AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(renew.token))
       AND e.kind IN ('reclaimed', 'cancelled')
       -- Its job still there, and kept there until this statement ends: an
       -- admin's prune of the job commits first, and the line goes with it,
       -- rather than failing the refusal with 23503.
       AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
     LIMIT 1
    ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING;

    RETURN NULL;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.renew(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_admin;
