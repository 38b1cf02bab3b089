-- lease_state(job_id, token) -> text
-- Read-only answer for the holder, typically right before an external effect:
--   held:      the token is current and its lease is live;
--   expired:   the token is current but its lease is past its deadline and
--              nobody has reclaimed the job yet (complete would still work);
--   completed: the job succeeded with this token;
--   lost:      anything else (reclaimed, failed, released, cancelled, unknown).
-- Raises 22023 when job_id or token is NULL.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.lease_state(job_id bigint, token uuid)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_state text;
BEGIN
    v_checked := taskboard.check_lease(lease_state.job_id, lease_state.token);

    SELECT CASE
               WHEN j.state = 'running' AND j.lease_expires_at > pg_catalog.clock_timestamp() THEN 'held'
               WHEN j.state = 'running' THEN 'expired'
               WHEN j.state = 'succeeded' THEN 'completed'
           END
      INTO v_state
      FROM taskboard.jobs AS j
     WHERE j.id = lease_state.job_id
       AND j.lease_token = lease_state.token
       AND j.state IN ('running', 'succeeded');

    RETURN coalesce(v_state, 'lost');
END
$function$;

REVOKE ALL ON FUNCTION taskboard.lease_state(bigint,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.lease_state(bigint,uuid) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.lease_state(bigint,uuid) TO taskboard_admin;
