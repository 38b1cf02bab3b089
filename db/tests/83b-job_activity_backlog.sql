-- job_activity on a retry backlog: the unfinished jobs are read through the
-- index jobs_unfinished_last_failure, by the time of their last failed
-- attempt (taskboard.last_failure_at: 83a-last_failure_at.sql), so jobs whose failures are all older
-- than `recent` are never read, and those with a failure within it still
-- count every failure within it.
--
-- Jobs are written as taskboard_owner with the error entries the test needs.

BEGIN;
SELECT plan(4);

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_unfinished_last_failure'::regclass),
    'CREATE INDEX jobs_unfinished_last_failure ON taskboard.jobs USING btree (taskboard.last_failure_at(errors)) WHERE ((state = ANY (ARRAY[''queued''::text, ''running''::text])) AND (errors <> ''[]''::jsonb))',
    'the index holds only unfinished jobs that have failed, by their last failure'
);

-- The backlog --------------------------------------------------------------------

SELECT pg_catalog.date_trunc('minute', clock_timestamp()) - interval '2 minutes' + interval '5 seconds' AS m2 \gset

SET LOCAL ROLE taskboard_owner;
INSERT INTO taskboard.jobs (queue, task, state, run_at, attempt, max_attempts, errors)
SELECT 'backlog', 't', 'queued', clock_timestamp(), 5, 10,
       (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'error', 'e', 'attempt', a, 'worker', 'w',
                   'at', clock_timestamp() - interval '6 hours' + a * interval '10 minutes'))
          FROM pg_catalog.generate_series(1, 5) AS a)
  FROM pg_catalog.generate_series(1, 2000) AS g;
-- One job of the backlog failed again two minutes ago (its older failures stay old).
UPDATE taskboard.jobs
   SET errors = errors || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
           'error', 'e', 'attempt', 6, 'worker', 'w', 'at', :'m2'::timestamptz))
 WHERE id = (SELECT pg_catalog.min(id) FROM taskboard.jobs WHERE queue = 'backlog');
RESET ROLE;
ANALYZE taskboard.jobs;

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    $$SELECT minute_start, queue, failed FROM taskboard.job_activity() WHERE queue = 'backlog'$$,
    format($$VALUES (%L::timestamptz, 'backlog'::text, 1::bigint)$$,
           pg_catalog.date_trunc('minute', :'m2'::timestamptz)),
    'of a backlog with old errors only the failure within the hour is counted'
);
SELECT results_eq(
    $$SELECT pg_catalog.sum(failed)::bigint FROM taskboard.job_activity(interval '7 hours') WHERE queue = 'backlog'$$,
    $$VALUES (10001::bigint)$$,
    'a `recent` that reaches the old failures counts each of them'
);
RESET ROLE;

-- The plan: job_activity's query of the unfinished jobs walks the index (as
-- planned for the time its `recent` gives).
CREATE FUNCTION pg_temp.plan_of(query text) RETURNS text LANGUAGE plpgsql AS $plan$
DECLARE
    v_line text;
    v_plan text := '';
BEGIN
    FOR v_line IN EXECUTE 'EXPLAIN ' || query LOOP
        v_plan := v_plan || v_line || E'\n';
    END LOOP;
    RETURN v_plan;
END
$plan$;
SELECT matches(
    pg_temp.plan_of(format($$SELECT j.queue, j.errors FROM taskboard.jobs AS j
                              WHERE j.state IN ('queued', 'running')
                                AND j.errors <> '[]'::jsonb
                                AND taskboard.last_failure_at(j.errors) >= %L::timestamptz$$,
                           :'m2'::timestamptz - interval '1 hour')),
    'jobs_unfinished_last_failure',
    'the unfinished jobs that failed within the hour are found through jobs_unfinished_last_failure'
);

SELECT * FROM finish();
ROLLBACK;
