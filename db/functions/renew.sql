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
--
-- renew_many of one job: the same update, answer and history line.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.renew(job_id bigint, token uuid, lease interval DEFAULT '00:01:00'::interval)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_lease(renew.job_id, renew.token);
    RETURN (SELECT r.lease_expires_at
              FROM taskboard.renew_many(ARRAY[renew.job_id], ARRAY[renew.token], renew.lease) AS r);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.renew(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.renew(bigint,uuid,interval) TO taskboard_admin;
