-- get_job(job_id): what a producer may see of a job, as one
-- taskboard.job_info row (job_id, queue, task, state, attempt,
-- max_attempts, priority, run_at, created_at, finished_at, result, errors,
-- started_at, payload, fence, concurrency_key, waiting_for) and never its
-- lease token. errors lists each failed
-- attempt's error, attempt, worker and time; started_at is when the last
-- claim started the job. An unknown id gives a NULL row; a NULL id
-- raises 22023.
--
-- A producer enqueues and reads; a worker claims, fails and completes; an
-- admin cancels.

BEGIN;
SELECT plan(30);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

-- A queued job ---------------------------------------------------------------

SELECT clock_timestamp() + interval '1 minute' AS soon \gset
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_invoice', payload => '{"invoice": 7}', queue => 'get-job',
                         run_at => :'soon', priority => 3, max_attempts => 2) AS job_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT job_id, queue, task, state, attempt, max_attempts, priority, run_at, finished_at, result, errors
               FROM taskboard.get_job(job_id => %s)$$, :job_id),
    format($$VALUES (%s::bigint, 'get-job'::text, 'send_invoice'::text, 'queued'::text, 0, 2, 3,
                     %L::timestamptz, NULL::timestamptz, NULL::jsonb, '[]'::jsonb)$$, :job_id, :'soon'),
    'a producer sees a queued job: its queue, task, state, attempts, priority, run_at, no finish, no result, no errors'
);

SELECT ok(
    (SELECT created_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz FROM taskboard.get_job(job_id => :job_id)),
    'get_job shows when the job was created'
);
RESET ROLE;

-- The token never shows -------------------------------------------------------

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :job_id;
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT started_at FROM taskboard.get_job(job_id => :job_id)), NULL,
    'a job never claimed has no started_at');
RESET ROLE;

SELECT clock_timestamp() AS c0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT token AS token_1 FROM taskboard.claim(queue => 'get-job', worker => 'worker-a') \gset
RESET ROLE;
SELECT clock_timestamp() AS c1 \gset

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT state, attempt, started_at BETWEEN %L::timestamptz AND %L::timestamptz
               FROM taskboard.get_job(job_id => %s)$$, :'c0', :'c1', :job_id),
    $$VALUES ('running'::text, 1, true)$$,
    'a producer sees the job running at attempt 1 once claimed, started when the claim ran'
);

SELECT is_empty(
    $$SELECT a.attname
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.job_info'::regclass
         AND a.attnum > 0
         AND (a.attname LIKE '%token%' OR a.attname LIKE '%lease%')$$,
    'get_job''s row type has no column named lease_token, token or lease_*'
);

SELECT set_eq(
    format($$SELECT pg_catalog.jsonb_object_keys(pg_catalog.to_jsonb(j)) FROM taskboard.get_job(job_id => %s) AS j$$, :job_id),
    ARRAY['job_id', 'queue', 'task', 'state', 'attempt', 'max_attempts', 'priority', 'run_at',
          'created_at', 'finished_at', 'result', 'errors', 'started_at', 'payload', 'fence',
          'concurrency_key', 'waiting_for'],
    'get_job returns exactly the documented fields'
);

SELECT is((SELECT payload FROM taskboard.get_job(job_id => :job_id)), '{"invoice": 7}'::jsonb,
    'get_job shows the payload the job was enqueued with');
SELECT is((SELECT fence FROM taskboard.get_job(job_id => :job_id)), 1::bigint,
    'get_job shows the fence of the latest claim: 1 after the first');

SELECT unalike(
    (SELECT pg_catalog.to_jsonb(j)::text FROM taskboard.get_job(job_id => :job_id) AS j),
    '%' || :'token_1' || '%',
    'the current token appears nowhere in what get_job returns'
);
RESET ROLE;

-- Failed attempts are listed --------------------------------------------------

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(
    taskboard.fail(job_id => :job_id, token => :'token_1', error => 'smtp timeout', retry_in => '1 second'),
    'queued',
    'the worker fails attempt 1 with one attempt left'
);
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT j.state, j.attempt, pg_catalog.jsonb_array_length(j.errors)
               FROM taskboard.get_job(job_id => %s) AS j$$, :job_id),
    $$VALUES ('queued'::text, 1, 1)$$,
    'after a failed attempt the producer sees the job queued again with one error'
);

SELECT results_eq(
    format($$SELECT e ->> 'error', (e ->> 'attempt')::int, e ->> 'worker',
                    (e ->> 'at')::timestamptz BETWEEN %L::timestamptz AND %L::timestamptz
               FROM taskboard.get_job(job_id => %s) AS j, pg_catalog.jsonb_array_elements(j.errors) AS e$$,
           :'t0', :'t1', :job_id),
    $$VALUES ('smtp timeout'::text, 1, 'worker-a'::text, true)$$,
    'the error lists its message, the attempt, the worker and the time'
);
RESET ROLE;

-- Success: result and finish time ---------------------------------------------

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :job_id;
RESET ROLE;

SELECT clock_timestamp() AS c2 \gset
SET LOCAL ROLE taskboard_worker;
SELECT token AS token_2 FROM taskboard.claim(queue => 'get-job', worker => 'worker-b') \gset
SELECT ok(taskboard.complete(job_id => :job_id, token => :'token_2', result => '{"sent": true}'),
    'worker B completes attempt 2');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT ok((SELECT started_at >= :'c2'::timestamptz FROM taskboard.get_job(job_id => :job_id)),
    'started_at is the last claim''s time, not the first''s');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT state, attempt, result, pg_catalog.jsonb_array_length(errors), finished_at IS NOT NULL
               FROM taskboard.get_job(job_id => %s)$$, :job_id),
    $$VALUES ('succeeded'::text, 2, '{"sent": true}'::jsonb, 1, true)$$,
    'a producer sees the job succeeded at attempt 2 with its result, a finish time and the earlier error'
);

SELECT unalike(
    (SELECT pg_catalog.to_jsonb(j)::text FROM taskboard.get_job(job_id => :job_id) AS j),
    '%' || :'token_2' || '%',
    'the token the job succeeded with appears nowhere in what get_job returns'
);
RESET ROLE;

-- Dead and cancelled jobs -------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'once', queue => 'get-job-dead', max_attempts => 1) AS dead_id \gset
SELECT taskboard.enqueue(task => 'stop', queue => 'get-job-cancelled') AS cancelled_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS dead_token FROM taskboard.claim(queue => 'get-job-dead', worker => 'worker-a') \gset
SELECT is(taskboard.fail(job_id => :dead_id, token => :'dead_token', error => 'boom'), 'dead',
    'the worker fails the job''s only attempt');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :cancelled_id), 'an admin cancels a queued job');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT state, attempt, errors -> 0 ->> 'error', finished_at IS NOT NULL
               FROM taskboard.get_job(job_id => %s)$$, :dead_id),
    $$VALUES ('dead'::text, 1, 'boom'::text, true)$$,
    'a producer sees a dead job with its last error and a finish time'
);

SELECT results_eq(
    format($$SELECT state, attempt, errors, finished_at IS NOT NULL
               FROM taskboard.get_job(job_id => %s)$$, :cancelled_id),
    $$VALUES ('cancelled'::text, 0, '[]'::jsonb, true)$$,
    'a producer sees a cancelled job with a finish time'
);
RESET ROLE;

-- Unknown and NULL ids ----------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT ok(
    taskboard.get_job(job_id => :unknown_id) IS NULL,
    'an unknown id gives a NULL row'
);

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.get_job(job_id => :unknown_id) AS j WHERE j IS NULL),
    1::bigint,
    'an unknown id gives one row whose fields are all NULL, not an error'
);

SELECT throws_ok($$SELECT taskboard.get_job(job_id => NULL)$$, '22023', NULL,
    'get_job rejects a NULL job_id');
RESET ROLE;

-- Every application role sees the same ------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.get_job(job_id => :job_id)::text AS seen_by_producer \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.get_job(job_id => :job_id)::text, :'seen_by_producer',
    'a worker sees what the producer sees');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.get_job(job_id => :job_id)::text, :'seen_by_producer',
    'an admin sees what the producer sees');
RESET ROLE;

-- What a waiting job waits for, and its concurrency key ------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'dep', queue => 'get-job-deps') AS dep_a \gset
SELECT taskboard.enqueue(task => 'dep', queue => 'get-job-deps') AS dep_b \gset
SELECT taskboard.enqueue(task => 'report', queue => 'get-job-waits', concurrency_key => 'customer-7',
                         depends_on => ARRAY[:dep_b, :dep_a]) AS waiter \gset
SELECT results_eq(
    format($$SELECT state, concurrency_key, waiting_for FROM taskboard.get_job(job_id => %s)$$, :waiter),
    format($$VALUES ('waiting'::text, 'customer-7'::text, ARRAY[%s, %s]::bigint[])$$, :dep_a, :dep_b),
    'a producer sees a waiting job''s concurrency key and the ids it waits for, in id order'
);
SELECT is((SELECT waiting_for FROM taskboard.get_job(job_id => :dep_a)), NULL::bigint[],
    'a queued job waits for nothing: waiting_for is NULL');
SELECT is((SELECT concurrency_key FROM taskboard.get_job(job_id => :dep_a)), NULL::text,
    'a job enqueued without a concurrency key shows none');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS claimed_dep, token AS dep_token
  FROM taskboard.claim(queue => 'get-job-deps', worker => 'worker-a') \gset
SELECT taskboard.complete(job_id => :claimed_dep, token => :'dep_token');
SELECT is((SELECT waiting_for FROM taskboard.get_job(job_id => :waiter)),
    ARRAY[CASE WHEN :claimed_dep = :dep_a THEN :dep_b ELSE :dep_a END]::bigint[],
    'a dependency that ends leaves waiting_for: the job waits for the other one only');
SELECT job_id AS claimed_dep, token AS dep_token
  FROM taskboard.claim(queue => 'get-job-deps', worker => 'worker-a') \gset
SELECT taskboard.complete(job_id => :claimed_dep, token => :'dep_token');
SELECT results_eq(
    format($$SELECT state, waiting_for FROM taskboard.get_job(job_id => %s)$$, :waiter),
    $$VALUES ('queued'::text, NULL::bigint[])$$,
    'once its last dependency ends the job is queued and waits for nothing'
);
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
