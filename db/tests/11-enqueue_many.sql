-- enqueue_many(task, payloads, queue, run_at, priority, max_attempts,
-- dedupe_keys): one job of `task` per payload in one round trip, ids
-- returned in payload order. dedupe_keys pairs with payloads element by
-- element (NULL element = no key) and behaves as in enqueue, scoped to
-- (queue, task, key); a key repeated inside the array yields the first
-- job's id. An empty array gives no rows.
-- Bad input raises 22023 and writes nothing.
--
-- Producers enqueue; a worker claims and completes. The table is read as
-- the session user to see what was stored.

BEGIN;
SELECT plan(62);

-- Ids in payload order, defaults --------------------------------------------

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE three ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task     => 'thumbnail',
           payloads => ARRAY['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is(
    (SELECT pg_catalog.count(*) FROM three),
    3::bigint,
    'three payloads give three ids'
);

SELECT is(
    (SELECT pg_catalog.count(DISTINCT id) FROM three),
    3::bigint,
    'three payloads without keys give three distinct jobs'
);

SELECT results_eq(
    $$SELECT t.ord, j.payload FROM three AS t JOIN taskboard.jobs AS j ON j.id = t.id ORDER BY t.ord$$,
    $$VALUES (1::bigint, '{"n": 1}'::jsonb), (2, '{"n": 2}'), (3, '{"n": 3}')$$,
    'the ids come back in payload order: the i-th id is the job of the i-th payload'
);

SELECT is_empty(
    $$SELECT j.id
        FROM three AS t
        JOIN taskboard.jobs AS j ON j.id = t.id
       WHERE (j.queue, j.task, j.state, j.priority, j.max_attempts, j.attempt) IS DISTINCT FROM
             ('default', 'thumbnail', 'queued', 0, 5, 0)
          OR j.dedupe_key IS NOT NULL$$,
    'by default the jobs are queued in queue default, priority 0, 5 attempts, none used, without keys'
);

SELECT ok(
    (SELECT pg_catalog.bool_and(j.run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz)
       FROM three AS t JOIN taskboard.jobs AS j ON j.id = t.id),
    'run_at NULL means now by the server clock at the call'
);

SELECT is(
    (SELECT pg_catalog.count(DISTINCT j.idempotency_key)
       FROM three AS t JOIN taskboard.jobs AS j ON j.id = t.id),
    3::bigint,
    'each job gets its own idempotency key'
);

-- Order holds for a large batch, whatever order ids are drawn in.
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE many ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task     => 'bulk',
           payloads => ARRAY(SELECT pg_catalog.jsonb_build_object('n', g)
                               FROM pg_catalog.generate_series(1, 1000) AS g),
           queue    => 'enqueue-many-bulk'
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM many AS m JOIN taskboard.jobs AS j ON j.id = m.id
      WHERE (j.payload ->> 'n')::bigint = m.ord),
    1000::bigint,
    'a thousand payloads give a thousand jobs, each id at its payload''s position'
);

-- Every argument is stored -------------------------------------------------

SELECT clock_timestamp() + interval '1 hour' AS later \gset
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE args ON COMMIT DROP AS
SELECT u.id
  FROM taskboard.enqueue_many(
           task         => 'report',
           payloads     => ARRAY['{"r": "a"}', '{"r": "b"}']::jsonb[],
           queue        => 'enqueue-many-args',
           run_at       => :'later',
           priority     => 7,
           max_attempts => 3
       ) AS u(id);
RESET ROLE;

SELECT results_eq(
    $$SELECT j.queue, j.task, j.state, j.run_at, j.priority, j.max_attempts
        FROM args AS a JOIN taskboard.jobs AS j ON j.id = a.id
       ORDER BY j.payload ->> 'r'$$,
    format($$VALUES ('enqueue-many-args'::text, 'report'::text, 'queued'::text, %1$L::timestamptz, 7, 3),
                    ('enqueue-many-args', 'report', 'queued', %1$L::timestamptz, 7, 3)$$, :'later'),
    'queue, task, run_at, priority and max_attempts apply to every job of the call'
);

-- Empty array ---------------------------------------------------------------

SELECT pg_catalog.count(*) AS rows_before_empty FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT is_empty(
    $$SELECT * FROM taskboard.enqueue_many(task => 'nothing', payloads => '{}')$$,
    'an empty payload array gives no rows'
);
SELECT is_empty(
    $$SELECT * FROM taskboard.enqueue_many(task => 'nothing', payloads => '{}', dedupe_keys => '{}')$$,
    'an empty payload array with an empty key array gives no rows'
);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_empty::bigint,
    'an empty payload array inserts nothing'
);

-- Dedupe keys ---------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE keyed ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => 'sync',
           payloads    => ARRAY['{"p": 1}', '{"p": 2}', '{"p": 3}', '{"p": 4}', '{"p": 5}']::jsonb[],
           queue       => 'enqueue-many-dedupe',
           dedupe_keys => ARRAY['a', NULL, 'b', 'a', NULL]
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM keyed),
    5::bigint,
    'one id per payload, keyed or not'
);

SELECT is(
    (SELECT id FROM keyed WHERE ord = 4),
    (SELECT id FROM keyed WHERE ord = 1),
    'a key repeated inside the array yields the first job''s id'
);

SELECT is(
    (SELECT pg_catalog.count(DISTINCT id) FROM keyed),
    4::bigint,
    'the other payloads, with another key or none, each get their own job'
);

SELECT results_eq(
    $$SELECT k.ord, j.payload, j.dedupe_key FROM keyed AS k JOIN taskboard.jobs AS j ON j.id = k.id ORDER BY k.ord$$,
    $$VALUES (1::bigint, '{"p": 1}'::jsonb, 'a'::text),
             (2, '{"p": 2}', NULL),
             (3, '{"p": 3}', 'b'),
             (4, '{"p": 1}', 'a'),
             (5, '{"p": 5}', NULL)$$,
    'keys pair with payloads element by element, and the repeated key''s job keeps the first payload'
);

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'enqueue-many-dedupe'),
    4::bigint,
    'the repeated key inserted nothing'
);

-- Keys already held by unfinished jobs.
SELECT pg_catalog.count(*) AS rows_before_held FROM taskboard.jobs \gset
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE held ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => 'sync',
           payloads    => ARRAY['{"p": 10}', '{"p": 11}', '{"p": 12}', '{"p": 13}']::jsonb[],
           queue       => 'enqueue-many-dedupe',
           dedupe_keys => ARRAY['b', 'c', 'a', 'c']
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT results_eq(
    $$SELECT h.ord, h.id = (SELECT k.id FROM keyed AS k WHERE k.ord = 3),
                    h.id = (SELECT k.id FROM keyed AS k WHERE k.ord = 1)
        FROM held AS h ORDER BY h.ord$$,
    $$VALUES (1::bigint, true, false), (2, false, false), (3, false, true), (4, false, false)$$,
    'keys held by unfinished jobs of the queue yield those jobs'' ids'
);

SELECT is(
    (SELECT id FROM held WHERE ord = 4),
    (SELECT id FROM held WHERE ord = 2),
    'a new key repeated in the same call yields the id of its first job'
);

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_held::bigint + 1,
    'only the new key inserted a job'
);

SELECT is(
    (SELECT payload FROM taskboard.jobs WHERE id = (SELECT k.id FROM keyed AS k WHERE k.ord = 1)),
    '{"p": 1}'::jsonb,
    'a deduplicated element leaves the existing job as it was'
);

-- The same keys in another queue are new jobs.
SET LOCAL ROLE taskboard_producer;
SELECT is(
    (SELECT pg_catalog.count(*)
       FROM taskboard.enqueue_many(task => 'sync', payloads => ARRAY['{}', '{}']::jsonb[],
                                   queue => 'enqueue-many-dedupe-other', dedupe_keys => ARRAY['a', 'b']) AS u(id)
      WHERE u.id IN (SELECT k.id FROM keyed AS k)),
    0::bigint,
    'the same keys in another queue make new jobs'
);
RESET ROLE;

-- Keys are scoped to (queue, task, key): the keys the sync jobs hold are
-- free for another task on the same queue, within one call too.
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE other_task ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => 'refund',
           payloads    => ARRAY['{"r": 1}', '{"r": 2}', '{"r": 3}', '{"r": 4}']::jsonb[],
           queue       => 'enqueue-many-dedupe',
           dedupe_keys => ARRAY['a', 'b', 'a', 'c']
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM other_task WHERE id IN (SELECT k.id FROM keyed AS k UNION ALL SELECT h.id FROM held AS h)),
    0::bigint,
    'keys held by unfinished sync jobs of the queue make new jobs for task refund'
);

SELECT results_eq(
    $$SELECT o.ord, j.task, j.dedupe_key, j.payload FROM other_task AS o JOIN taskboard.jobs AS j ON j.id = o.id ORDER BY o.ord$$,
    $$VALUES (1::bigint, 'refund'::text, 'a'::text, '{"r": 1}'::jsonb),
             (2, 'refund', 'b', '{"r": 2}'),
             (3, 'refund', 'a', '{"r": 1}'),
             (4, 'refund', 'c', '{"r": 4}')$$,
    'within the call, key a held by a sync job is one new refund job for both its elements'
);

SELECT is(
    (SELECT pg_catalog.count(DISTINCT id) FROM other_task),
    3::bigint,
    'three keys, three refund jobs'
);

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    $$SELECT u.id FROM taskboard.enqueue_many(task => 'refund', payloads => ARRAY['{}', '{}', '{}']::jsonb[],
                                              queue => 'enqueue-many-dedupe', dedupe_keys => ARRAY['c', 'b', 'a']) AS u(id)$$,
    $$SELECT o.id FROM other_task AS o WHERE o.ord IN (4, 2, 1) ORDER BY o.ord DESC$$,
    'the same task and keys again yield the unfinished refund jobs'
);
SELECT results_eq(
    $$SELECT u.id FROM taskboard.enqueue_many(task => 'sync', payloads => ARRAY['{}', '{}']::jsonb[],
                                              queue => 'enqueue-many-dedupe', dedupe_keys => ARRAY['a', 'b']) AS u(id)$$,
    $$SELECT k.id FROM keyed AS k WHERE k.ord IN (1, 3) ORDER BY k.ord$$,
    'and the sync keys still yield the unfinished sync jobs'
);
RESET ROLE;

-- enqueue and enqueue_many share one scope.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge', queue => 'enqueue-many-scope', dedupe_key => 'order-1') AS charge_id \gset
SELECT isnt(
    (SELECT u.id FROM taskboard.enqueue_many(task => 'refund', payloads => ARRAY['{}']::jsonb[],
                                             queue => 'enqueue-many-scope', dedupe_keys => ARRAY['order-1']) AS u(id)),
    :charge_id::bigint,
    'enqueue_many of a refund with the key of a charge from enqueue makes a new job'
);
SELECT is(
    (SELECT u.id FROM taskboard.enqueue_many(task => 'charge', payloads => ARRAY['{}']::jsonb[],
                                             queue => 'enqueue-many-scope', dedupe_keys => ARRAY['order-1']) AS u(id)),
    :charge_id::bigint,
    'enqueue_many of a charge with that key yields the charge from enqueue'
);
RESET ROLE;

-- A running job still holds its key; once it finishes the key is free.
SELECT id AS a_id FROM keyed WHERE ord = 1 \gset
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token
  FROM taskboard.claim(queue => 'enqueue-many-dedupe', worker => 'enqueue-many-worker', batch => 10)
 WHERE job_id = :a_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    $$SELECT u.id FROM taskboard.enqueue_many(task => 'sync', payloads => ARRAY['{}']::jsonb[],
                                              queue => 'enqueue-many-dedupe', dedupe_keys => ARRAY['a']) AS u(id)$$,
    format($$VALUES (%s::bigint)$$, :a_id),
    'a running job still holds its key: its id is returned'
);
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT ok(taskboard.complete(job_id => :a_id, token => :'a_token'), 'the worker completes the job holding key a');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT u.id AS a_again
  FROM taskboard.enqueue_many(task => 'sync', payloads => ARRAY['{"p": 20}']::jsonb[],
                              queue => 'enqueue-many-dedupe', dedupe_keys => ARRAY['a']) AS u(id) \gset
RESET ROLE;

SELECT isnt(:a_again::bigint, :a_id::bigint,
    'after the job holding a key succeeded, the key makes a new job');

SELECT is(
    (SELECT row(state, payload)::text FROM taskboard.jobs WHERE id = :a_again),
    row('queued', '{"p": 20}'::jsonb)::text,
    'the new job is queued with its own payload'
);

-- NULL keys are no keys.
SET LOCAL ROLE taskboard_producer;
SELECT is(
    (SELECT pg_catalog.count(DISTINCT u.id)
       FROM taskboard.enqueue_many(task => 'sync', payloads => ARRAY['{}', '{}']::jsonb[],
                                   queue => 'enqueue-many-dedupe', dedupe_keys => ARRAY[NULL, NULL]::text[]) AS u(id)),
    2::bigint,
    'NULL key elements mean no key: each payload gets its own job'
);
RESET ROLE;

-- Arrays that do not start at index 1 pair by position.
SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE shifted ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => 'shifted',
           payloads    => '[0:2]={"{\"s\": 0}","{\"s\": 1}","{\"s\": 2}"}'::jsonb[],
           queue       => 'enqueue-many-shifted',
           dedupe_keys => '[5:7]={x,NULL,x}'::text[]
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT results_eq(
    $$SELECT s.ord, j.payload, j.dedupe_key FROM shifted AS s JOIN taskboard.jobs AS j ON j.id = s.id ORDER BY s.ord$$,
    $$VALUES (1::bigint, '{"s": 0}'::jsonb, 'x'::text), (2, '{"s": 1}', NULL), (3, '{"s": 0}', 'x')$$,
    'arrays with other lower bounds pair payloads and keys by position'
);

SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE shifted_nokeys ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task     => 'shifted',
           payloads => '[-1:1]={"{\"s\": 0}","{\"s\": 1}","{\"s\": 2}"}'::jsonb[],
           queue    => 'enqueue-many-shifted-nokeys'
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT results_eq(
    $$SELECT s.ord, j.payload, j.dedupe_key, j.state FROM shifted_nokeys AS s JOIN taskboard.jobs AS j ON j.id = s.id ORDER BY s.ord$$,
    $$VALUES (1::bigint, '{"s": 0}'::jsonb, NULL::text, 'queued'::text), (2, '{"s": 1}', NULL, 'queued'), (3, '{"s": 2}', NULL, 'queued')$$,
    'without keys, a payload array with another lower bound gets one job per payload, in payload order'
);

-- Bad input: 22023, nothing written ----------------------------------------

SELECT pg_catalog.count(*) AS rows_before_bad FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => NULL, payloads => ARRAY['{}']::jsonb[])$$,
    '22023', NULL, 'enqueue_many rejects a NULL task');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => '', payloads => ARRAY['{}']::jsonb[])$$,
    '22023', NULL, 'enqueue_many rejects an empty task');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], queue => NULL)$$,
    '22023', NULL, 'enqueue_many rejects a NULL queue');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], queue => '')$$,
    '22023', NULL, 'enqueue_many rejects an empty queue');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => NULL)$$,
    '22023', NULL, 'enqueue_many rejects a NULL payload array');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', NULL]::jsonb[])$$,
    '22023', NULL, 'enqueue_many rejects a NULL payload inside the array, writing none of the others');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', '{}']::jsonb[],
                                                         dedupe_keys => ARRAY['k'])$$,
    '22023', NULL, 'enqueue_many rejects fewer keys than payloads');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[],
                                                         dedupe_keys => ARRAY['k', 'l'])$$,
    '22023', NULL, 'enqueue_many rejects more keys than payloads');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', '{}']::jsonb[],
                                                         dedupe_keys => ARRAY['k', ''])$$,
    '22023', NULL, 'enqueue_many rejects an empty key (NULL means no key)');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], priority => NULL)$$,
    '22023', NULL, 'enqueue_many rejects a NULL priority');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], max_attempts => NULL)$$,
    '22023', NULL, 'enqueue_many rejects a NULL max_attempts');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], max_attempts => 0)$$,
    '22023', NULL, 'enqueue_many rejects max_attempts 0');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY[ARRAY['{}'], ARRAY['{}']]::jsonb[])$$,
    '22023', NULL, 'enqueue_many rejects a two-dimensional payload array');
SELECT throws_ok(format($$SELECT * FROM taskboard.enqueue_many(task => %L, payloads => ARRAY['{}']::jsonb[])$$,
                        pg_catalog.repeat('t', 201)),
    '22023', NULL, 'enqueue_many rejects a task of 201 characters');
SELECT throws_ok(format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], queue => %L)$$,
                        pg_catalog.repeat('q', 201)),
    '22023', NULL, 'enqueue_many rejects a queue of 201 characters');
SELECT throws_ok(format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', '{}', '{}']::jsonb[],
                                                                dedupe_keys => ARRAY['k', NULL, %L])$$,
                        pg_catalog.repeat('k', 401)),
    '22023', NULL, 'enqueue_many rejects a dedupe key of 401 characters, writing none of the other jobs');
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_bad::bigint,
    'rejected calls wrote nothing'
);

-- Names at their limits: task and queue of 200 characters, keys of 400 ------

SELECT pg_catalog.repeat('t', 200) AS task_200,
       pg_catalog.repeat('q', 200) AS queue_200,
       pg_catalog.repeat('k', 400) AS key_400 \gset

SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE longest ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => :'task_200',
           payloads    => ARRAY['{"l": 1}', '{"l": 2}', '{"l": 3}']::jsonb[],
           queue       => :'queue_200',
           dedupe_keys => ARRAY[:'key_400', NULL, :'key_400']
       ) WITH ORDINALITY AS u(id, ord);
RESET ROLE;

SELECT results_eq(
    $$SELECT l.ord, j.task = pg_catalog.repeat('t', 200), j.queue = pg_catalog.repeat('q', 200),
             pg_catalog.char_length(j.dedupe_key)
        FROM longest AS l
        JOIN taskboard.jobs AS j ON j.id = l.id
       ORDER BY l.ord$$,
    $$VALUES (1::bigint, true, true, 400), (2, true, true, NULL), (3, true, true, 400)$$,
    'a task and a queue of exactly 200 characters and dedupe keys of exactly 400 are accepted and stored whole'
);

SELECT is(
    (SELECT id FROM longest WHERE ord = 3),
    (SELECT id FROM longest WHERE ord = 1),
    'a 400-character key repeated in the array yields the first job''s id'
);

SET LOCAL ROLE taskboard_producer;
CREATE TEMP TABLE longest_other ON COMMIT DROP AS
SELECT u.id, u.ord
  FROM taskboard.enqueue_many(
           task        => pg_catalog.repeat('u', 200),
           payloads    => ARRAY['{"l": 1}', '{"l": 2}']::jsonb[],
           queue       => :'queue_200',
           dedupe_keys => ARRAY[:'key_400', :'key_400']
       ) WITH ORDINALITY AS u(id, ord);
SELECT results_eq(
    format($$SELECT u.id FROM taskboard.enqueue_many(task => %L, payloads => ARRAY['{}']::jsonb[],
                                                     queue => %L, dedupe_keys => ARRAY[%L]) AS u(id)$$,
           :'task_200', :'queue_200', :'key_400'),
    $$SELECT l.id FROM longest AS l WHERE l.ord = 1$$,
    'the first 200-character task with the 400-character key again yields its job'
);
RESET ROLE;

SELECT results_eq(
    $$SELECT o.ord, o.id = (SELECT f.id FROM longest_other AS f WHERE f.ord = 1),
             o.id IN (SELECT l.id FROM longest AS l)
        FROM longest_other AS o ORDER BY o.ord$$,
    $$VALUES (1::bigint, true, false), (2, true, false)$$,
    'another 200-character task with the same queue and 400-character key gets one job of its own'
);

-- The trace context ---------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(*) FROM taskboard.enqueue_many(task => 'traced', queue => 'many-trace',
    payloads => ARRAY['{"n": 1}', '{"n": 2}']::jsonb[],
    trace_context => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}');
SELECT pg_catalog.count(*) FROM taskboard.enqueue_many(task => 'traced', queue => 'many-trace',
    payloads => ARRAY['{"n": 3}']::jsonb[], dedupe_keys => ARRAY['k'],
    trace_context => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}');
SELECT pg_catalog.count(*) FROM taskboard.enqueue_many(task => 'untraced', queue => 'many-trace',
    payloads => ARRAY['{"n": 4}']::jsonb[]);
RESET ROLE;

SELECT results_eq(
    $$SELECT payload->>'n', trace_context->>'traceparent' FROM taskboard.jobs WHERE queue = 'many-trace' ORDER BY payload->>'n'$$,
    $$VALUES ('1', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
             ('2', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
             ('3', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
             ('4', NULL)$$,
    'every job of a call stores its trace context, with keys or without; a call without one stores none'
);

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], trace_context => '"x"')$$,
    '22023', NULL, 'enqueue_many refuses a trace context that is not a JSON object');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], trace_context => '{"a": null}')$$,
    '22023', NULL, 'enqueue_many refuses a trace context with a value that is not a string');
SELECT throws_ok(
    $$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[],
        trace_context => pg_catalog.jsonb_build_object('tracestate', pg_catalog.repeat('x', 8200)))$$,
    '22023', NULL, 'enqueue_many refuses a trace context longer than 8192 bytes');
RESET ROLE;

-- run_at inside the years 1 to 9999 -------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_like($$SELECT taskboard.enqueue_many('t', ARRAY['{}']::jsonb[], run_at => '10000-01-01 00:00:00+00')$$,
    'run_at must be between 0001-01-01 and 9999-12-31, got %', 'a producer cannot enqueue many for the year 10000');
SELECT throws_like($$SELECT taskboard.enqueue_many('t', ARRAY['{}']::jsonb[], run_at => '0001-01-01 00:00:00+00'::timestamptz - interval '1 second')$$,
    'run_at must be between 0001-01-01 and 9999-12-31, got %', 'a producer cannot enqueue many before the year 1');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
