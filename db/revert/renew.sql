-- Revert taskboard:renew to its v0.4.4 definition
-- requires: renew@v0.4.2
-- requires: jobs
-- requires: checks
--
-- The lease is checked by taskboard.check_interval, after job_id and token as
-- before, with the messages it always had; the contract, the function's
-- comment, is unchanged.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

CREATE OR REPLACE FUNCTION taskboard.renew(
    job_id bigint,
    token  uuid,
    lease  interval DEFAULT '60 seconds'
)
RETURNS timestamptz
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
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

COMMENT ON FUNCTION taskboard.renew(bigint,uuid,interval) IS
$comment$renew(job_id, token, lease) -> timestamptz
Extends the holder's lease to clock + lease and returns the new deadline,
when `token` is current and its lease has not yet expired.
NULL: the token is not current (reclaimed, completed, failed, released,
cancelled) or its lease already expired; nothing changes and the worker
must treat the job as lost.
Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
or longer than 12 hours ('infinity' included).$comment$;

REVOKE ALL ON FUNCTION taskboard.renew(bigint, uuid, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint, uuid, interval)
    TO :"worker_role", :"admin_role";

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
