-- Revert taskboard:complete to its v0.4.4 definition
-- requires: jobs
--
-- The same text as functions/complete.sql, where the current definition reads.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- complete(job_id, token, result) -> boolean
-- Marks the job succeeded with `result` and finished_at when `token` is the
-- current lease token, even if its lease expired, as long as nobody
-- reclaimed the job.
-- true:  the job is succeeded by this token; repeating the call with the
--        same token after that success returns true again and changes nothing.
-- false: the token is not current (reclaimed, failed, released, cancelled,
--        or never issued); nothing changes. Writes the caller made in the
--        same transaction must then be rolled back by the caller.
-- Raises 22023 when job_id or token is NULL.

CREATE OR REPLACE FUNCTION taskboard.complete(
    job_id bigint,
    token  uuid,
    result jsonb DEFAULT NULL
)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF complete.job_id IS NULL THEN
        RAISE EXCEPTION 'job_id must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF complete.token IS NULL THEN
        RAISE EXCEPTION 'token must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = 'succeeded',
           result = complete.result,
           finished_at = pg_catalog.clock_timestamp()
     WHERE j.id = complete.job_id
       AND j.state = 'running'
       AND j.lease_token = complete.token;
    IF FOUND THEN
        RETURN true;
    END IF;

    -- The same holder asking again after its own success.
    RETURN EXISTS (
        SELECT
          FROM taskboard.jobs AS j
         WHERE j.id = complete.job_id
           AND j.state = 'succeeded'
           AND j.lease_token = complete.token
    );
END
$function$;

REVOKE ALL ON FUNCTION taskboard.complete(bigint, uuid, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint, uuid, jsonb)
    TO :"worker_role", :"admin_role";

COMMENT ON FUNCTION taskboard.complete(bigint,uuid,jsonb) IS
$comment$complete(job_id, token, result) -> boolean
Marks the job succeeded with `result` and finished_at when `token` is the
current lease token, even if its lease expired, as long as nobody
reclaimed the job.
true:  the job is succeeded by this token; repeating the call with the
       same token after that success returns true again and changes nothing.
false: the token is not current (reclaimed, failed, released, cancelled,
       or never issued); nothing changes. Writes the caller made in the
       same transaction must then be rolled back by the caller.
Raises 22023 when job_id or token is NULL.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
