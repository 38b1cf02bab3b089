-- fail(job_id, token, error, retry_in, retry, traceback) -> text
-- The holder reports a failed attempt. The error is recorded with the
-- attempt, the worker and the time, and with the traceback when one is
-- given (key `traceback`, absent otherwise). With `retry` true and attempts
-- left the job is queued again at clock + retry_in (NULL: 2^attempt seconds
-- with +/-25 % jitter, capped at one hour); with none left, or with `retry`
-- false (a non-retryable error, whatever attempts are left and whatever
-- retry_in says), it becomes dead at once, with finished_at, and the jobs
-- waiting on it (taskboard.enqueue's depends_on) are cancelled in the same
-- transaction, with the error 'dependency N ended dead', but for those
-- enqueued with on_dependency_failure 'run', which count it as ended.
-- Returns the new state, 'queued' or 'dead'.
-- The traceback is bounded: one longer than 16384 characters keeps its
-- last 16000 (where the exception is), after a first line saying how many
-- characters were cut, so at most 16 KiB of characters is stored.
-- NULL: the token is not current; the job does not change.
-- A refused write by a holder whose lease was reclaimed or cancelled is a
-- line of the job's history (taskboard.job_history), once per token and
-- kind; a token the history does not know is not recorded. The line is
-- written in the caller's transaction: a caller that rolls back keeps none.
-- Raises 22023 when job_id, token or retry is NULL, or retry_in is not
-- positive or longer than 12 hours ('infinity' included).
-- Calls by name of the four-argument form of 0.1.0 and 0.2.0 resolve to
-- this one: the two arguments it gained come last, with defaults.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.fail(job_id bigint, token uuid, error text, retry_in interval DEFAULT NULL::interval, retry boolean DEFAULT true, traceback text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    -- A longer traceback keeps its last c_traceback_kept characters.
    c_traceback_max  constant integer := 16384;
    c_traceback_kept constant integer := 16000;
    v_now       timestamptz := pg_catalog.clock_timestamp();
    v_traceback text := fail.traceback;
    v_state     text;
BEGIN
    v_checked := taskboard.check_lease(fail.job_id, fail.token);
    v_checked := taskboard.check_given('retry', fail.retry, 'true: retry while attempts are left; false: dead at once');
    IF fail.retry_in IS NOT NULL THEN
        v_checked := taskboard.check_interval('retry_in', fail.retry_in, interval '12 hours');
    END IF;

    IF pg_catalog.length(v_traceback) > c_traceback_max THEN
        v_traceback := pg_catalog.format(
                '[traceback cut: its first %s characters are not stored]',
                pg_catalog.length(v_traceback) - c_traceback_kept)
            || E'\n' || pg_catalog.right(v_traceback, c_traceback_kept);
    END IF;

    UPDATE taskboard.jobs AS j
       SET state = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN 'dead'
               ELSE 'queued'
           END,
           run_at = CASE
               WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN j.run_at
               ELSE v_now + coalesce(
                   fail.retry_in,
                   -- Past attempt 13 even 75 % of 2^attempt s exceeds the
                   -- one-hour cap; the exponent is bounded only so that
                   -- power() cannot overflow.
                   pg_catalog.make_interval(secs => least(
                       3600,
                       pg_catalog.power(2, least(j.attempt, 16)) * (0.75 + 0.5 * pg_catalog.random()))))
           END,
           finished_at = CASE WHEN NOT fail.retry OR j.attempt >= j.max_attempts THEN v_now END,
           errors = j.errors || pg_catalog.jsonb_build_array(
               pg_catalog.jsonb_build_object(
                   'error', fail.error,
                   'attempt', j.attempt,
                   'worker', j.claimed_by,
                   'at', v_now)
               || CASE
                      WHEN v_traceback IS NULL THEN '{}'::jsonb
                      ELSE pg_catalog.jsonb_build_object('traceback', v_traceback)
                  END)
     WHERE j.id = fail.job_id
       AND j.state = 'running'
       AND j.lease_token = fail.token
    RETURNING j.state INTO v_state;
    IF v_state IS NOT NULL THEN
        -- Its dependents, read in a statement of their own with the row
        -- locked (the UPDATE's snapshot may predate a wait for it).
        IF v_state = 'dead'
           AND (EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = fail.job_id)
                OR pg_catalog.current_setting('transaction_isolation') <> 'read committed') THEN
            PERFORM taskboard.settle_dependents(ARRAY[fail.job_id]);
        END IF;
        RETURN v_state;
    END IF;

    -- Refused: a line of the job's history when the token's lease was
    -- reclaimed or cancelled.
    PERFORM taskboard.record_refusals('refused_fail', ARRAY[fail.job_id], ARRAY[fail.token]);

    RETURN NULL;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) TO taskboard_admin;
