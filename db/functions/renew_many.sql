-- renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
-- renew for many jobs in one statement: job_ids[i] is renewed with
-- tokens[i]. One row per input element, in input order; lease_expires_at is
-- the new deadline, or NULL where renewal was refused (token not current or
-- lease already expired: the job is lost to this worker). The rows holding
-- their given tokens are locked in job_id order, as complete_many locks
-- them, so one worker's renewer and completer never deadlock.
-- A refused write by a holder whose lease was reclaimed or cancelled is a
-- line of the job's history (taskboard.job_history), once per token and
-- kind; a token the history does not know is not recorded. The line is
-- written in the caller's transaction: a caller that rolls back keeps none.
-- Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
-- NULL, their lengths differ, or lease is NULL, not positive or longer than
-- 12 hours ('infinity' included), by the deadline it gives: unless
-- clock < clock + lease <= clock + 12 hours, months and days counted as
-- the calendar makes them.
--
-- plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
-- per session, made at the first call and kept until PostgreSQL invalidates
-- it. Every step finds its rows by primary key, whatever the table held
-- when the plan was made.

-- The source of this function: edit it here. The header above is its COMMENT ON
-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.
CREATE OR REPLACE FUNCTION taskboard.renew_many(job_ids bigint[], tokens uuid[], lease interval DEFAULT '00:01:00'::interval)
 RETURNS TABLE(job_id bigint, lease_expires_at timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    -- What a check answers: nothing; it returns, or raises 22023.
    v_checked text;
    v_now timestamptz := pg_catalog.clock_timestamp();
    -- The answer, one element per input element in input order.
    v_ids       bigint[];
    v_deadlines timestamptz[];
BEGIN
    v_checked := taskboard.check_leases('job_ids and tokens', renew_many.job_ids, renew_many.tokens);
    v_checked := taskboard.check_interval('lease', renew_many.lease, interval '12 hours');

    WITH input AS (
        SELECT u.id, u.token, u.ord
          FROM unnest(renew_many.job_ids, renew_many.tokens) WITH ORDINALITY AS u(id, token, ord)
    ),
    locked AS MATERIALIZED (
        -- Every row holding its input token, locked in job_id order: found
        -- through the primary key, the state and lease read from the locked
        -- row rather than asked of the running index. FOR NO KEY UPDATE, the
        -- lock the update takes anyway: a refusal's FOR KEY SHARE
        -- (record_refusals), in this worker's complete_many, does not wait for it (FOR UPDATE made the
        -- two calls deadlock when a reclaim landed while they waited).
        SELECT j.id, j.state, j.lease_expires_at, i.token
          FROM taskboard.jobs AS j
          JOIN input AS i ON i.id = j.id AND i.token = j.lease_token
         WHERE j.id = ANY (renew_many.job_ids)
         ORDER BY j.id
           FOR NO KEY UPDATE OF j
    ),
    renewed AS (
        UPDATE taskboard.jobs AS j
           SET lease_expires_at = v_now + renew_many.lease
          FROM locked AS l
         WHERE j.id = l.id
           AND l.state = 'running'
           AND l.lease_expires_at > v_now
           AND j.lease_token = l.token
        RETURNING j.id, j.lease_token, j.lease_expires_at
    )
    SELECT pg_catalog.array_agg(i.id ORDER BY i.ord), pg_catalog.array_agg(r.lease_expires_at ORDER BY i.ord)
      INTO v_ids, v_deadlines
      FROM input AS i
      LEFT JOIN renewed AS r ON r.id = i.id AND r.lease_token = i.token;

    -- The refused rows, lines of their jobs' history when their lease was
    -- reclaimed or cancelled; when every row is accepted, nothing is read.
    IF pg_catalog.array_position(v_deadlines, NULL) IS NOT NULL THEN
        PERFORM taskboard.record_refusals('refused_renew',
            ARRAY(SELECT u.id FROM unnest(v_ids, v_deadlines) AS u(id, deadline)
                   WHERE u.deadline IS NULL),
            ARRAY(SELECT u.token FROM unnest(renew_many.tokens, v_deadlines) AS u(token, deadline)
                   WHERE u.deadline IS NULL));
    END IF;

    RETURN QUERY SELECT u.id, u.deadline FROM unnest(v_ids, v_deadlines) AS u(id, deadline);
END
$function$;

REVOKE ALL ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) TO taskboard_worker;
GRANT EXECUTE ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) TO taskboard_admin;
