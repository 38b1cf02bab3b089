-- complete(job_id, token, result) -> boolean
-- Marks the job succeeded with `result` and finished_at when `token` is the
-- current lease token, even if its lease expired, as long as nobody
-- reclaimed the job.
-- true:  the job is succeeded by this token; repeating the call with the
--        same token after that success returns true again and changes nothing.
-- false: the token is not current (reclaimed, failed, released, cancelled,
--        or never issued); the job does not change. Writes the caller made in the
--        same transaction must then be rolled back by the caller.
-- A refused write by a holder whose lease was reclaimed or cancelled is a
-- line of the job's history (taskboard.job_history), once per token and
-- kind; a token the history does not know is not recorded. The line is
-- written in the caller's transaction: a caller that rolls back keeps none.
-- An accepted completion settles, in the same transaction, the jobs waiting
-- on this one (taskboard.enqueue's depends_on): the last dependency of one
-- done makes it queued. A refused completion settles nothing.
-- Raises 22023 when job_id or token is NULL.
--
-- complete_many of one job: the same update, answer and history line.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
BEGIN
    v_checked := taskboard.check_lease(complete.job_id, complete.token);
    RETURN (SELECT c.completed
              FROM taskboard.complete_many(ARRAY[complete.job_id], ARRAY[complete.token],
                                           ARRAY[complete.result]) AS c);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.complete(bigint,uuid,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO taskboard_admin;
