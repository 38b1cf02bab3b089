-- Revert taskboard:release to its v0.1.0 definition
-- The same text as functions/release.sql, where the current definition reads.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- release(job_id, token, delay) -> boolean
-- The holder hands the job back, typically at shutdown: it is queued again
-- at clock + delay and this claim is not counted as an attempt. Sends
-- NOTIFY taskboard, '<queue>' when delay is zero.
-- true:  released.
-- false: the token is not current; nothing changes.
-- Raises 22023 when job_id or token is NULL, or delay is NULL or negative.

CREATE OR REPLACE FUNCTION taskboard.release(
    job_id bigint,
    token  uuid,
    delay  interval DEFAULT '0'
)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_queue text;
BEGIN
    IF release.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF release.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF release.delay IS NULL OR release.delay < interval '0' THEN
        RAISE EXCEPTION 'delay must not be NULL or negative, got %', release.delay
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

REVOKE ALL ON FUNCTION taskboard.release(bigint, uuid, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.release(bigint, uuid, interval)
    TO :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
