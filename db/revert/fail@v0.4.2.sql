-- Revert taskboard:fail to its v0.2.0 definition

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

DROP FUNCTION taskboard.fail(bigint, uuid, text, interval, boolean, text);

-- fail(job_id, token, error, retry_in) -> text
-- The holder reports a failed attempt. The error is recorded with the
-- attempt, the worker and the time. With attempts left the job is queued
-- again at clock + retry_in (NULL: 2^attempt seconds with +/-25 % jitter,
-- capped at one hour); with none left it becomes dead. Returns the new
-- state, 'queued' or 'dead'.
-- NULL: the token is not current; nothing changes.
-- Raises 22023 when job_id or token is NULL, or retry_in is not positive or
-- longer than 12 hours ('infinity' included).

CREATE OR REPLACE FUNCTION taskboard.fail(
    job_id   bigint,
    token    uuid,
    error    text,
    retry_in interval DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now   timestamptz := pg_catalog.clock_timestamp();
    v_state text;
BEGIN
    IF fail.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.retry_in <= interval '0' THEN
        RAISE EXCEPTION 'retry_in must be positive, got %', fail.retry_in
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fail.retry_in > interval '12 hours' THEN
        RAISE EXCEPTION 'retry_in must be at most 12 hours, got %', fail.retry_in
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'queued' END,
           run_at = CASE
               WHEN j.attempt >= j.max_attempts THEN j.run_at
               ELSE v_now + coalesce(
                   fail.retry_in,
                   -- Past attempt 13 even 75 % of 2^attempt s exceeds the
                   -- one-hour cap; the exponent is bounded only so that
                   -- power() cannot overflow.
                   pg_catalog.make_interval(secs => least(
                       3600,
                       pg_catalog.power(2, least(j.attempt, 16)) * (0.75 + 0.5 * pg_catalog.random()))))
           END,
           finished_at = CASE WHEN j.attempt >= j.max_attempts THEN v_now END,
           errors = j.errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
               'error', fail.error,
               'attempt', j.attempt,
               'worker', j.claimed_by,
               'at', v_now))
     WHERE j.id = fail.job_id
       AND j.state = 'running'
       AND j.lease_token = fail.token
    RETURNING j.state INTO v_state;

    RETURN v_state;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.fail(bigint, uuid, text, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.fail(bigint, uuid, text, interval)
    TO :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
