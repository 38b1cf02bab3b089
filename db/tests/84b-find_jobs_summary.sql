-- find_jobs_summary(queue, state, task, after_id, max_rows): the jobs
-- find_jobs gives for the same arguments, in the same order, each as one
-- line of a list: no payload, result, errors or token, but how many
-- attempts failed and the last one's error, cut at 200 characters. Every
-- role may; bad input raises 22023 as find_jobs does.

BEGIN;
SELECT plan(17);

-- Who may: every role -------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT lives_ok($$SELECT * FROM taskboard.find_jobs_summary()$$, 'a producer can list job lines');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT lives_ok($$SELECT * FROM taskboard.find_jobs_summary()$$, 'a worker can list job lines');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(queue => '')$$, '22023',
    'queue must not be empty (NULL: every queue)', 'an empty queue is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(task => '')$$, '22023',
    'task must not be empty (NULL: every task)', 'an empty task is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(state => 'done')$$, '22023',
    'state must be waiting, queued, running, succeeded, dead or cancelled, got ''done''',
    'an unknown state is refused, named');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(max_rows => 0)$$, '22023',
    'max_rows must be between 1 and 1000, got 0', 'max_rows 0 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(max_rows => 1001)$$, '22023',
    'max_rows must be between 1 and 1000, got 1001', 'max_rows over 1000 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.find_jobs_summary(max_rows => NULL)$$, '22023',
    'max_rows must be between 1 and 1000, got NULL', 'a NULL max_rows is refused');
RESET ROLE;

-- What a line holds ------------------------------------------------------------------

SELECT is(
    (SELECT pg_catalog.array_agg(a.attname::text ORDER BY a.attnum)
       FROM pg_catalog.pg_attribute AS a
      WHERE a.attrelid = 'taskboard.job_summary'::regclass
        AND a.attnum > 0
        AND NOT a.attisdropped),
    ARRAY['job_id', 'queue', 'task', 'state', 'attempt', 'max_attempts', 'priority', 'run_at',
          'created_at', 'started_at', 'finished_at', 'failures', 'last_error'],
    'a line has the documented thirteen columns: no payload, result, errors, fence or token'
);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', pg_catalog.jsonb_build_object('blob', pg_catalog.repeat('x', 100000)), 'fjs-a') AS a1 \gset
SELECT taskboard.enqueue('sms',  '{"n": 2}', 'fjs-a') AS a2 \gset
SELECT taskboard.enqueue('mail', '{"n": 3}', 'fjs-b') AS b1 \gset
SELECT taskboard.enqueue('mail', '{"n": 4}', 'fjs-a') AS a3 \gset
RESET ROLE;

-- a1 (its payload 100 kB) fails once with a long error and waits; a2 and a3 run.
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS c1, token AS t1 FROM taskboard.claim('fjs-a', 'w1', 1) \gset
SELECT is(taskboard.fail(:c1, :'t1', pg_catalog.repeat('E', 500)), 'queued',
    'the first claimed job fails once and waits for its next attempt');
SELECT job_id AS c2, token AS t2 FROM taskboard.claim('fjs-a', 'w1', 1) \gset
SELECT job_id AS c3, token AS t3 FROM taskboard.claim('fjs-a', 'w1', 1) \gset
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT results_eq(
    $$SELECT job_id, queue, task, state FROM taskboard.find_jobs_summary(queue => 'fjs-a')$$,
    $$SELECT job_id, queue, task, state FROM taskboard.find_jobs(queue => 'fjs-a')$$,
    'the same jobs as find_jobs, newest first'
);
SELECT results_eq(
    format($$SELECT job_id FROM taskboard.find_jobs_summary(queue => 'fjs-a', task => 'mail', after_id => %s)$$, :a3),
    format($$VALUES (%s::bigint)$$, :a1),
    'filters and keyset paging as find_jobs'
);
SELECT results_eq(
    format($$SELECT job_id, state FROM taskboard.find_jobs_summary(state => 'queued', queue => 'fjs-b', max_rows => 1)$$),
    format($$VALUES (%s::bigint, 'queued'::text)$$, :b1),
    'the state filter and max_rows as find_jobs'
);
SELECT is(
    (SELECT ROW(s.failures, pg_catalog.length(s.last_error), pg_catalog.left(s.last_error, 3))::text
       FROM taskboard.find_jobs_summary(queue => 'fjs-a') AS s
      WHERE s.job_id = :c1),
    '(1,200,EEE)',
    'a failed job''s line counts its failures and shows the last error''s first 200 characters'
);
SELECT is(
    (SELECT ROW(s.failures, s.last_error)::text
       FROM taskboard.find_jobs_summary(queue => 'fjs-a') AS s
      WHERE s.job_id = :a2),
    '(0,)',
    'a job that never failed has no failures and no last error'
);
SELECT is(
    (SELECT s.started_at IS NOT NULL AND s.finished_at IS NULL
       FROM taskboard.find_jobs_summary(queue => 'fjs-a') AS s
      WHERE s.job_id = :c2),
    true,
    'a running job''s line says when it started and has not finished'
);
SELECT is(
    (SELECT pg_catalog.count(*)::int
       FROM taskboard.find_jobs_summary(queue => 'fjs-a', max_rows => 2)),
    2,
    'max_rows bounds the lines'
);
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
