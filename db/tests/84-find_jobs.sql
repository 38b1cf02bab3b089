-- find_jobs(queue, state, task, after_id, max_rows): jobs matching every
-- filter given, newest first by id, keyset-paged by after_id, as
-- taskboard.job_info rows that never carry a token. Every role may (get_job
-- already shows any job to each); bad input raises 22023.

BEGIN;
SELECT plan(20);

-- Who may: every role -----------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT lives_ok($$SELECT * FROM taskboard.find_jobs()$$, 'a producer can list jobs');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT lives_ok($$SELECT * FROM taskboard.find_jobs()$$, 'a worker can list jobs');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(queue => '')$$, '22023',
    'queue must not be empty (NULL: every queue)', 'an empty queue is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(task => '')$$, '22023',
    'task must not be empty (NULL: every task)', 'an empty task is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(state => 'done')$$, '22023',
    'state must be waiting, queued, running, succeeded, dead or cancelled, got ''done''',
    'an unknown state is refused, named');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(max_rows => 0)$$, '22023',
    'max_rows must be between 1 and 1000, got 0', 'max_rows 0 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(max_rows => 1001)$$, '22023',
    'max_rows must be between 1 and 1000, got 1001', 'max_rows over 1000 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs(max_rows => NULL)$$, '22023',
    'max_rows must be between 1 and 1000, got NULL', 'a NULL max_rows is refused');
RESET ROLE;

-- Filters and order ---------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', '{"n": 1}', 'fj-a') AS a1 \gset
SELECT taskboard.enqueue('sms',  '{"n": 2}', 'fj-a') AS a2 \gset
SELECT taskboard.enqueue('mail', '{"n": 3}', 'fj-b') AS b1 \gset
SELECT taskboard.enqueue('mail', '{"n": 4}', 'fj-a') AS a3 \gset
SELECT taskboard.enqueue('mail', '{"n": 5}', 'fj-a') AS a4 \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS running_id, token AS running_token FROM taskboard.claim('fj-a', 'w1', 1) \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(:a4), 'the newest job of fj-a is cancelled');

SELECT results_eq(
    $$SELECT job_id FROM taskboard.find_jobs(queue => 'fj-a')$$,
    format('VALUES (%s::bigint), (%s), (%s), (%s)', :a4, :a3, :a2, :a1),
    'a queue''s jobs come newest first by id'
);
SELECT results_eq(
    $$SELECT job_id FROM taskboard.find_jobs(queue => 'fj-a', task => 'mail', state => 'queued')$$,
    format('VALUES (%s::bigint)', :a3),
    'every filter given applies: queue, task and state'
);
SELECT results_eq(
    $$SELECT job_id, state FROM taskboard.find_jobs(queue => 'fj-a', state => 'running')$$,
    format($$VALUES (%s::bigint, 'running'::text)$$, :running_id),
    'the running job is found by its state'
);
SELECT results_eq(
    $$SELECT job_id FROM taskboard.find_jobs(queue => 'fj-a', task => 'mail', max_rows => 2)$$,
    format('VALUES (%s::bigint), (%s)', :a4, :a3),
    'max_rows bounds the page'
);
SELECT results_eq(
    format($$SELECT job_id FROM taskboard.find_jobs(queue => 'fj-a', task => 'mail', after_id => %s, max_rows => 2)$$, :a3),
    format('VALUES (%s::bigint)', :a1),
    'after_id gives the next page: the jobs older than it'
);
SELECT is_empty(
    format($$SELECT * FROM taskboard.find_jobs(queue => 'fj-a', after_id => %s)$$, :a1),
    'nothing is older than the oldest job'
);
SELECT is_empty(
    $$SELECT * FROM taskboard.find_jobs(queue => 'fj-none')$$,
    'a queue without jobs gives no rows'
);

-- What a row shows ----------------------------------------------------------------

SELECT results_eq(
    format($$SELECT queue, task, state, attempt, started_at IS NOT NULL, payload, fence FROM taskboard.find_jobs(queue => 'fj-a')
              WHERE job_id = %s$$, :running_id),
    format($$VALUES ('fj-a'::text, 'mail'::text, 'running'::text, 1, true, %L::jsonb, 1::bigint)$$,
           (SELECT payload FROM taskboard.get_job(:running_id))),
    'a row shows the job as get_job does, started_at, payload and fence included'
);
SELECT results_eq(
    $$SELECT job_id FROM taskboard.find_jobs(queue => 'fj-a', state => 'cancelled')$$,
    format('VALUES (%s::bigint)', :a4),
    'the cancelled job is found by its state'
);
SELECT unalike(
    (SELECT pg_catalog.string_agg(pg_catalog.to_jsonb(j)::text, ' ') FROM taskboard.find_jobs(queue => 'fj-a') AS j),
    '%' || :'running_token' || '%',
    'the running job''s token appears nowhere in what find_jobs returns'
);
RESET ROLE;

-- A waiting job's row says what it waits for --------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'fj-w', concurrency_key => 'acme',
                         depends_on => ARRAY[:running_id]) AS waiter \gset
SELECT results_eq(
    $$SELECT job_id, state, concurrency_key, waiting_for FROM taskboard.find_jobs(queue => 'fj-w')$$,
    format($$VALUES (%s::bigint, 'waiting'::text, 'acme'::text, ARRAY[%s]::bigint[])$$, :waiter, :running_id),
    'a waiting job''s row shows its concurrency key and the ids it still waits for, as get_job does'
);
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
