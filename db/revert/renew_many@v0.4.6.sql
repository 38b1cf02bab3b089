-- Revert taskboard:renew_many to its v0.4.4 definition
-- requires: renew_many@v0.4.3
-- requires: jobs
-- requires: checks
--
-- lease is checked by taskboard.check_interval, by the deadline it gives:
-- clock + lease later than clock and no later than clock + 12 hours, where
-- the interval itself was compared before (a month counted as 30 days).
-- Messages unchanged for a lease the old check also refused; the
-- function's comment says the new bound.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
-- renew for many jobs in one statement: job_ids[i] is renewed with
-- tokens[i]. One row per input element, in input order; lease_expires_at is
-- the new deadline, or NULL where renewal was refused (token not current or
-- lease already expired: the job is lost to this worker). Rows are locked
-- in job_id order, as complete_many locks them, so one worker's renewer and
-- completer never deadlock.
-- Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
-- NULL, their lengths differ, or lease is NULL, not positive or longer than
-- 12 hours ('infinity' included).

CREATE OR REPLACE FUNCTION taskboard.renew_many(
    job_ids bigint[],
    tokens  uuid[],
    lease   interval DEFAULT '60 seconds'
)
RETURNS TABLE (job_id bigint, lease_expires_at timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_now timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF renew_many.job_ids IS NULL THEN
        RAISE EXCEPTION 'job_ids must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF renew_many.tokens IS NULL THEN
        RAISE EXCEPTION 'tokens must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_ndims(renew_many.job_ids) > 1 OR pg_catalog.array_ndims(renew_many.tokens) > 1 THEN
        RAISE EXCEPTION 'job_ids and tokens must be one-dimensional arrays'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(renew_many.job_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'job_ids must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.array_position(renew_many.tokens, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'tokens must not contain NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(renew_many.job_ids) <> pg_catalog.cardinality(renew_many.tokens) THEN
        RAISE EXCEPTION 'job_ids has % elements but tokens has %',
            pg_catalog.cardinality(renew_many.job_ids), pg_catalog.cardinality(renew_many.tokens)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM taskboard.check_interval('lease', renew_many.lease, interval '12 hours');

    RETURN QUERY
    WITH input AS (
        SELECT u.id, u.token, u.ord
          FROM unnest(renew_many.job_ids, renew_many.tokens) WITH ORDINALITY AS u(id, token, ord)
    ),
    locked AS MATERIALIZED (
        SELECT j.id, i.token
          FROM taskboard.jobs AS j
          JOIN input AS i ON i.id = j.id
         WHERE j.state = 'running'
           AND j.lease_token = i.token
           AND j.lease_expires_at > v_now
         ORDER BY j.id
           FOR UPDATE OF j
    ),
    renewed AS (
        UPDATE taskboard.jobs AS j
           SET lease_expires_at = v_now + renew_many.lease
          FROM locked AS l
         WHERE j.id = l.id
           AND j.state = 'running'
           AND j.lease_token = l.token
           AND j.lease_expires_at > v_now
        RETURNING j.id, j.lease_token, j.lease_expires_at
    )
    SELECT i.id, r.lease_expires_at
      FROM input AS i
      LEFT JOIN renewed AS r ON r.id = i.id AND r.lease_token = i.token
     ORDER BY i.ord;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.renew_many(bigint[], uuid[], interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.renew_many(bigint[], uuid[], interval)
    TO :"worker_role", :"admin_role";

COMMENT ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) IS
$comment$renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
renew for many jobs in one statement: job_ids[i] is renewed with
tokens[i]. One row per input element, in input order; lease_expires_at is
the new deadline, or NULL where renewal was refused (token not current or
lease already expired: the job is lost to this worker). Rows are locked
in job_id order, as complete_many locks them, so one worker's renewer and
completer never deadlock.
Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
NULL, their lengths differ, or lease is NULL, not positive or longer than
12 hours ('infinity' included), by the deadline it gives: unless
clock < clock + lease <= clock + 12 hours, months and days counted as
the calendar makes them.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
