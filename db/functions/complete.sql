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

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.complete(job_id bigint, token uuid, result jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
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
        -- Its dependents, read in a statement of their own with the row
        -- locked: this snapshot shows every edge committed before the lock
        -- (the UPDATE's may predate a wait for it).
        IF EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = complete.job_id)
           OR pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            PERFORM taskboard.settle_dependents(ARRAY[complete.job_id]);
        END IF;
        RETURN true;
    END IF;

    -- The same holder asking again after its own success.
    IF EXISTS (
        SELECT
          FROM taskboard.jobs AS j
         WHERE j.id = complete.job_id
           AND j.state = 'succeeded'
           AND j.lease_token = complete.token
    ) THEN
        RETURN true;
    END IF;

    -- Refused. A token the history knows (its lease was reclaimed or
    -- cancelled) is recorded once per token; any other token is not.
    INSERT INTO taskboard.job_events
           (job_id, kind, worker, attempt, fence, lease_expires_at, token_digest)
    SELECT e.job_id, 'refused_complete', e.worker, e.attempt, e.fence, e.lease_expires_at, e.token_digest
      FROM taskboard.job_events AS e
     WHERE e.job_id = complete.job_id
       AND e.token_digest = pg_catalog.sha256(pg_catalog.uuid_send(complete.token))
       AND e.kind IN ('reclaimed', 'cancelled')
       -- Its job still there, and kept there until this statement ends: an
       -- admin's prune of the job commits first, and the line goes with it,
       -- rather than failing the refusal with 23503.
       AND EXISTS (SELECT FROM taskboard.jobs AS k WHERE k.id = e.job_id FOR KEY SHARE)
     LIMIT 1
    ON CONFLICT ON CONSTRAINT job_events_once DO NOTHING;

    RETURN false;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.complete(bigint,uuid,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.complete(bigint,uuid,jsonb) TO taskboard_admin;
