-- Deploy taskboard:find_jobs to pg
-- requires: find_jobs@v0.4.9
-- requires: dependencies
--
-- The state filter knows waiting.

BEGIN;

\set owner_role :prefix _owner
\set producer_role :prefix _producer
\set worker_role :prefix _worker
\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

-- find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
-- Jobs for people and dashboards: those matching every filter given (NULL:
-- any), newest first by id, at most max_rows of them. Keyset paging: pass
-- the last job_id of a page as after_id to get the jobs older than it.
-- Never a token. For every role: get_job already shows any job to each of
-- them, and ids are consecutive.
-- Raises 22023 when queue or task is empty, state is not one of waiting,
-- queued, running, succeeded, dead or cancelled, or max_rows is NULL or outside
-- 1..1000.

CREATE OR REPLACE FUNCTION taskboard.find_jobs(
    queue    text    DEFAULT NULL,
    state    text    DEFAULT NULL,
    task     text    DEFAULT NULL,
    after_id bigint  DEFAULT NULL,
    max_rows integer DEFAULT 50
)
RETURNS SETOF taskboard.job_info
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Planned per call with the filters given, so an absent one costs nothing.
SET plan_cache_mode = force_custom_plan
AS $function$
BEGIN
    IF find_jobs.queue = '' THEN
        RAISE EXCEPTION 'queue must not be empty (NULL: every queue)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.task = '' THEN
        RAISE EXCEPTION 'task must not be empty (NULL: every task)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.state NOT IN ('waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled') THEN
        RAISE EXCEPTION 'state must be waiting, queued, running, succeeded, dead or cancelled, got %',
            pg_catalog.quote_literal(find_jobs.state)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF find_jobs.max_rows IS NULL OR find_jobs.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000, got %',
            coalesce(find_jobs.max_rows::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    SELECT j.id, j.queue, j.task, j.state, j.attempt, j.max_attempts, j.priority,
           j.run_at, j.created_at, j.finished_at, j.result, j.errors, j.started_at,
           j.payload, j.fence
      FROM taskboard.jobs AS j
     WHERE (find_jobs.queue IS NULL OR j.queue = find_jobs.queue)
       AND (find_jobs.state IS NULL OR j.state = find_jobs.state)
       AND (find_jobs.task IS NULL OR j.task = find_jobs.task)
       AND (find_jobs.after_id IS NULL OR j.id < find_jobs.after_id)
     ORDER BY j.id DESC
     LIMIT find_jobs.max_rows;
END
$function$;

REVOKE ALL ON FUNCTION taskboard.find_jobs(text, text, text, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION taskboard.find_jobs(text, text, text, bigint, integer)
    TO :"producer_role", :"worker_role", :"admin_role";

COMMENT ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) IS
$comment$find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
Jobs for people and dashboards: those matching every filter given (NULL:
any), newest first by id, at most max_rows of them. Keyset paging: pass
the last job_id of a page as after_id to get the jobs older than it.
Never a token. For every role: get_job already shows any job to each of
them, and ids are consecutive.
Raises 22023 when queue or task is empty, state is not one of waiting,
queued, running, succeeded, dead or cancelled, or max_rows is NULL or outside
1..1000.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
