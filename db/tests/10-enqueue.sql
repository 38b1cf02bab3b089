-- enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key):
-- inserts a queued job, runnable from run_at (NULL = now), and returns its
-- id. With dedupe_key, an unfinished job of the same queue and task holding
-- the key answers instead and nothing is inserted; a job of another task
-- with the same key does not. Bad input raises 22023 and writes nothing. It
-- joins the caller's transaction.
--
-- Producers enqueue and read get_job; a worker claims and completes, an
-- admin cancels. The table is read as the session user to see what was
-- stored.

BEGIN;
SELECT plan(78);

-- Defaults ------------------------------------------------------------------

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email') AS default_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE id = :default_id),
    1::bigint,
    'enqueue returns the id of the row it inserted'
);

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    format($$SELECT job_id, queue, task, state, attempt, max_attempts, priority, finished_at, result, errors
               FROM taskboard.get_job(job_id => %s)$$, :default_id),
    format($$VALUES (%s::bigint, 'default'::text, 'send_email'::text, 'queued'::text, 0, 5, 0,
                     NULL::timestamptz, NULL::jsonb, '[]'::jsonb)$$, :default_id),
    'a job enqueued with only a task is queued in queue default, priority 0, 5 attempts, none used'
);
RESET ROLE;

SELECT is(
    (SELECT payload FROM taskboard.jobs WHERE id = :default_id),
    '{}'::jsonb,
    'the default payload is an empty JSON object'
);

SELECT is(
    (SELECT dedupe_key FROM taskboard.jobs WHERE id = :default_id),
    NULL,
    'the default is no dedupe key'
);

SELECT ok(
    (SELECT run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz FROM taskboard.jobs WHERE id = :default_id),
    'run_at NULL means now by the server clock at the call, not the transaction start'
);

SELECT ok(
    (SELECT created_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz FROM taskboard.jobs WHERE id = :default_id),
    'created_at is the server clock at the call'
);

SELECT is(
    (SELECT row(lease_token, lease_expires_at, claimed_by)::text FROM taskboard.jobs WHERE id = :default_id),
    row(NULL::uuid, NULL::timestamptz, NULL::text)::text,
    'a new job has no lease and no holder'
);

SELECT isnt(
    (SELECT idempotency_key FROM taskboard.jobs WHERE id = :default_id),
    NULL,
    'a new job gets an idempotency key'
);

-- Every argument is stored -------------------------------------------------

SELECT clock_timestamp() + interval '1 hour' AS later \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(
    task         => 'resize_image',
    payload      => '{"image": 42, "sizes": [64, 128]}',
    queue        => 'enqueue-args',
    run_at       => :'later',
    priority     => -3,
    max_attempts => 2,
    dedupe_key   => 'image-42'
) AS args_id \gset
RESET ROLE;

SELECT results_eq(
    format($$SELECT queue, task, payload, state, run_at, priority, max_attempts, dedupe_key, attempt
               FROM taskboard.jobs WHERE id = %s$$, :args_id),
    format($$VALUES ('enqueue-args'::text, 'resize_image'::text, '{"image": 42, "sizes": [64, 128]}'::jsonb,
                     'queued'::text, %L::timestamptz, -3, 2, 'image-42'::text, 0)$$, :'later'),
    'every argument of enqueue is stored on the job, and a future run_at is kept as given'
);

SELECT isnt(
    (SELECT idempotency_key FROM taskboard.jobs WHERE id = :args_id),
    (SELECT idempotency_key FROM taskboard.jobs WHERE id = :default_id),
    'each job has its own idempotency key'
);

SELECT clock_timestamp() - interval '1 day' AS yesterday \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'late', queue => 'enqueue-args', run_at => :'yesterday') AS past_id \gset
RESET ROLE;

SELECT is(
    (SELECT run_at FROM taskboard.jobs WHERE id = :past_id),
    :'yesterday'::timestamptz,
    'a run_at in the past is kept as given'
);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'n', queue => 'enqueue-no-key') AS nokey_a \gset
SELECT taskboard.enqueue(task => 'n', queue => 'enqueue-no-key') AS nokey_b \gset
RESET ROLE;

SELECT isnt(:nokey_a::bigint, :nokey_b::bigint,
    'two jobs without a dedupe key are two jobs');

-- Dedupe keys ---------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'welcome', payload => '{"v": 1}', queue => 'enqueue-dedupe',
                         dedupe_key => 'user-7') AS dedupe_first \gset
RESET ROLE;
SELECT pg_catalog.count(*) AS rows_before_dup FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT is(
    taskboard.enqueue(task => 'welcome', payload => '{"v": 2}', queue => 'enqueue-dedupe',
                      priority => 9, dedupe_key => 'user-7'),
    :dedupe_first::bigint,
    'the same key in the same queue returns the unfinished job''s id'
);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_dup::bigint,
    'a deduplicated enqueue inserts nothing'
);

SELECT is(
    (SELECT row(payload, priority)::text FROM taskboard.jobs WHERE id = :dedupe_first),
    row('{"v": 1}'::jsonb, 0)::text,
    'a deduplicated enqueue leaves the existing job as it was'
);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'welcome', queue => 'enqueue-dedupe-other',
                         dedupe_key => 'user-7') AS dedupe_other_queue \gset
RESET ROLE;

SELECT isnt(:dedupe_other_queue::bigint, :dedupe_first::bigint,
    'the same key in another queue makes a new job');

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_dup::bigint + 1,
    'the job in the other queue was inserted'
);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'welcome', queue => 'enqueue-dedupe',
                         dedupe_key => 'user-8') AS dedupe_other_key \gset
RESET ROLE;

SELECT isnt(:dedupe_other_key::bigint, :dedupe_first::bigint,
    'another key in the same queue makes a new job');

-- A running job still holds its key.
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS running_id, token AS running_token
  FROM taskboard.claim(queue => 'enqueue-dedupe', worker => 'enqueue-worker', batch => 10)
 WHERE job_id = :dedupe_first \gset
RESET ROLE;

SELECT is(
    (SELECT state FROM taskboard.jobs WHERE id = :dedupe_first),
    'running',
    'the keyed job is now running'
);

SET LOCAL ROLE taskboard_producer;
SELECT is(
    taskboard.enqueue(task => 'welcome', queue => 'enqueue-dedupe', dedupe_key => 'user-7'),
    :dedupe_first::bigint,
    'a running job still holds its key: enqueue returns its id'
);
RESET ROLE;

-- Once the job finishes the key is free again.
SET LOCAL ROLE taskboard_worker;
SELECT ok(
    taskboard.complete(job_id => :dedupe_first, token => :'running_token'),
    'the worker completes the keyed job'
);
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'welcome', queue => 'enqueue-dedupe',
                         dedupe_key => 'user-7') AS dedupe_again \gset
RESET ROLE;

SELECT isnt(:dedupe_again::bigint, :dedupe_first::bigint,
    'after the keyed job succeeded, the key makes a new job');

SELECT is(
    (SELECT state FROM taskboard.jobs WHERE id = :dedupe_again),
    'queued',
    'the new keyed job is queued'
);

SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :dedupe_again), 'an admin cancels the new keyed job');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'welcome', queue => 'enqueue-dedupe',
                         dedupe_key => 'user-7') AS dedupe_third \gset
RESET ROLE;

SELECT ok(
    :dedupe_third::bigint NOT IN (:dedupe_first, :dedupe_again),
    'after the keyed job was cancelled, the key makes a new job'
);

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs
      WHERE queue = 'enqueue-dedupe' AND dedupe_key = 'user-7' AND state IN ('queued', 'running')),
    1::bigint,
    'one unfinished job holds the key'
);

-- A scheduled job holds its key too.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'later', queue => 'enqueue-dedupe-scheduled', run_at => :'later',
                         dedupe_key => 'nightly') AS scheduled_id \gset
SELECT is(
    taskboard.enqueue(task => 'later', queue => 'enqueue-dedupe-scheduled', dedupe_key => 'nightly'),
    :scheduled_id::bigint,
    'a scheduled job holds its key: enqueue returns its id'
);
RESET ROLE;

-- Keys are scoped to (queue, task, key) ---------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge', queue => 'enqueue-scope', dedupe_key => 'order-1') AS charge_id \gset
SELECT taskboard.enqueue(task => 'refund', queue => 'enqueue-scope', dedupe_key => 'order-1') AS refund_id \gset
RESET ROLE;

SELECT isnt(:refund_id::bigint, :charge_id::bigint,
    'a refund with the key of an unfinished charge on the same queue is a job of its own');

SELECT results_eq(
    format($$SELECT id, task, state FROM taskboard.jobs WHERE id IN (%s, %s) ORDER BY task$$, :charge_id, :refund_id),
    format($$VALUES (%s::bigint, 'charge'::text, 'queued'::text), (%s, 'refund', 'queued')$$, :charge_id, :refund_id),
    'the charge and the refund are both queued, each with its own task'
);

SET LOCAL ROLE taskboard_producer;
SELECT is(
    taskboard.enqueue(task => 'charge', queue => 'enqueue-scope', dedupe_key => 'order-1'),
    :charge_id::bigint,
    'the same task and key on the same queue still returns the unfinished charge'
);
SELECT is(
    taskboard.enqueue(task => 'refund', queue => 'enqueue-scope', dedupe_key => 'order-1'),
    :refund_id::bigint,
    'and the unfinished refund for the refund'
);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'enqueue-scope'),
    2::bigint,
    'the deduplicated calls inserted nothing'
);

-- Finishing one task's job frees the key for that task only.
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :charge_id), 'an admin cancels the charge');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT isnt(
    taskboard.enqueue(task => 'charge', queue => 'enqueue-scope', dedupe_key => 'order-1'),
    :charge_id::bigint,
    'with the charge cancelled, the key makes a new charge'
);
SELECT is(
    taskboard.enqueue(task => 'refund', queue => 'enqueue-scope', dedupe_key => 'order-1'),
    :refund_id::bigint,
    'the refund still holds the key for its task'
);
RESET ROLE;

-- The key is compared whole, byte for byte: strings that bytea's input
-- syntax would read as the same bytes are different keys.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'bytes', queue => 'enqueue-scope', dedupe_key => 'A') AS key_a \gset
SELECT taskboard.enqueue(task => 'bytes', queue => 'enqueue-scope', dedupe_key => '\x41') AS key_hex \gset
SELECT taskboard.enqueue(task => 'bytes', queue => 'enqueue-scope', dedupe_key => '\101') AS key_octal \gset
SELECT taskboard.enqueue(task => 'bytes', queue => 'enqueue-scope', dedupe_key => '\\x41') AS key_escaped \gset
SELECT is(
    taskboard.enqueue(task => 'bytes', queue => 'enqueue-scope', dedupe_key => '\x41'),
    :key_hex::bigint,
    'a key with a backslash deduplicates like any other'
);
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(DISTINCT k.id) FROM (VALUES (:key_a), (:key_hex), (:key_octal), (:key_escaped)) AS k(id)),
    4::bigint,
    'A, \x41, \101 and \\x41 are four keys, four jobs'
);

-- It joins the caller's transaction ----------------------------------------

SAVEPOINT before_enqueue;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'rolled_back', queue => 'enqueue-rollback',
                         dedupe_key => 'once') AS rolled_back_id \gset
ROLLBACK TO SAVEPOINT before_enqueue;
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE id = :rolled_back_id OR queue = 'enqueue-rollback'),
    0::bigint,
    'a job enqueued in a transaction that rolls back is gone with it'
);

SET LOCAL ROLE taskboard_producer;
SELECT isnt(
    taskboard.enqueue(task => 'rolled_back', queue => 'enqueue-rollback', dedupe_key => 'once'),
    :rolled_back_id::bigint,
    'the key of a rolled-back job is free'
);
RESET ROLE;

-- Bad input: 22023, nothing written ----------------------------------------

SELECT pg_catalog.count(*) AS rows_before_bad FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.enqueue(task => NULL)$$, '22023', NULL,
    'enqueue rejects a NULL task');
SELECT throws_ok($$SELECT taskboard.enqueue(task => '')$$, '22023', NULL,
    'enqueue rejects an empty task');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', queue => NULL)$$, '22023', NULL,
    'enqueue rejects a NULL queue');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', queue => '')$$, '22023', NULL,
    'enqueue rejects an empty queue');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', payload => NULL)$$, '22023', NULL,
    'enqueue rejects a NULL payload');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', priority => NULL)$$, '22023', NULL,
    'enqueue rejects a NULL priority');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', max_attempts => NULL)$$, '22023', NULL,
    'enqueue rejects a NULL max_attempts');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', max_attempts => 0)$$, '22023', NULL,
    'enqueue rejects max_attempts 0');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', max_attempts => -1)$$, '22023', NULL,
    'enqueue rejects a negative max_attempts');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', dedupe_key => '')$$, '22023', NULL,
    'enqueue rejects an empty dedupe key (NULL means no key)');
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_bad::bigint,
    'rejected enqueues wrote nothing'
);

-- The boundaries of valid input are accepted.
SET LOCAL ROLE taskboard_producer;
SELECT lives_ok($$SELECT taskboard.enqueue(task => 't', max_attempts => 1)$$,
    'max_attempts 1 is accepted');
SELECT lives_ok($$SELECT taskboard.enqueue(task => 't', priority => -2147483648)$$,
    'any integer priority is accepted');
SELECT lives_ok($$SELECT taskboard.enqueue(task => 't', payload => '[1, "two", null]')$$,
    'any JSON value is accepted as payload');
SELECT lives_ok($$SELECT taskboard.enqueue(task => 't', payload => 'null')$$,
    'a JSON null payload is accepted, unlike SQL NULL');
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_bad::bigint + 4,
    'each accepted enqueue inserted one job'
);

-- Name lengths: task and queue up to 200 characters, keys up to 400 --------
-- Longer names get 22023 before they reach an index or pg_notify, and write
-- nothing. The limits count characters, not bytes.

SELECT pg_catalog.repeat('t', 200) AS task_200,
       pg_catalog.repeat('q', 200) AS queue_200,
       pg_catalog.repeat('k', 400) AS key_400 \gset
SELECT pg_catalog.count(*) AS rows_before_long FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.enqueue(task => %L)$$, :'task_200' || 't'), '22023', NULL,
    'enqueue rejects a task of 201 characters');
SELECT throws_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'queue_200' || 'q'), '22023', NULL,
    'enqueue rejects a queue of 201 characters');
SELECT throws_ok(format($$SELECT taskboard.enqueue(task => 't', dedupe_key => %L)$$, :'key_400' || 'k'), '22023', NULL,
    'enqueue rejects a dedupe key of 401 characters');
RESET ROLE;

SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs),
    :rows_before_long::bigint,
    'enqueues rejected for overlong names wrote nothing'
);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => :'task_200', queue => :'queue_200', dedupe_key => :'key_400') AS long_id \gset
SELECT is(
    taskboard.enqueue(task => :'task_200', queue => :'queue_200', dedupe_key => :'key_400'),
    :long_id::bigint,
    'a 400-character dedupe key deduplicates like a short one'
);
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => pg_catalog.repeat('u', 200), queue => :'queue_200', dedupe_key => :'key_400') AS long_other_id \gset
SELECT is(
    taskboard.enqueue(task => pg_catalog.repeat('u', 200), queue => :'queue_200', dedupe_key => :'key_400'),
    :long_other_id::bigint,
    'another 200-character task with the same queue and 400-character key is a job of its own, and deduplicates'
);
RESET ROLE;
SELECT isnt(:long_other_id::bigint, :long_id::bigint,
    'the two 200-character tasks do not share the key');

SELECT results_eq(
    format($$SELECT task, queue, dedupe_key FROM taskboard.jobs WHERE id = %s$$, :long_id),
    format($$VALUES (%L::text, %L::text, %L::text)$$, :'task_200', :'queue_200', :'key_400'),
    'a task and a queue of exactly 200 characters and a dedupe key of exactly 400 are accepted and stored whole'
);

-- The worst case for the dedupe index: the longest names in incompressible
-- four-byte characters. Queue, task and key (800, 800 and 1600 bytes) would
-- not fit one btree entry (2704 bytes); the index holds the key's 32-byte
-- SHA-256 instead.
SELECT pg_catalog.current_setting('server_encoding') = 'UTF8' AS utf8 \gset
\if :utf8
SELECT pg_catalog.string_agg(pg_catalog.chr(131072 + ('x' || pg_catalog.md5('q' || g))::bit(16)::int), '' ORDER BY g)
       AS wide_200
  FROM pg_catalog.generate_series(1, 200) AS g \gset
SELECT pg_catalog.string_agg(pg_catalog.chr(131072 + ('x' || pg_catalog.md5('k' || g))::bit(16)::int), '' ORDER BY g)
       AS wide_400
  FROM pg_catalog.generate_series(1, 400) AS g \gset
SELECT pg_catalog.string_agg(pg_catalog.chr(131072 + ('x' || pg_catalog.md5('t' || g))::bit(16)::int), '' ORDER BY g)
       AS wide_task_200
  FROM pg_catalog.generate_series(1, 200) AS g \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => :'wide_task_200', queue => :'wide_200', dedupe_key => :'wide_400') AS wide_id \gset
SELECT is(
    taskboard.enqueue(task => :'wide_task_200', queue => :'wide_200', dedupe_key => :'wide_400'),
    :wide_id::bigint,
    'names of 200 and 400 four-byte characters are accepted, and the key deduplicates'
);
SELECT taskboard.enqueue(task => :'wide_200', queue => :'wide_200', dedupe_key => :'wide_400') AS wide_other_id \gset
SELECT is(
    taskboard.enqueue(task => :'wide_200', queue => :'wide_200', dedupe_key => :'wide_400'),
    :wide_other_id::bigint,
    'another task of 200 four-byte characters with the same queue and key deduplicates on its own'
);
RESET ROLE;
SELECT isnt(:wide_other_id::bigint, :wide_id::bigint,
    'the two tasks of four-byte characters do not share the key');
SELECT results_eq(
    format($$SELECT pg_catalog.char_length(queue), pg_catalog.octet_length(queue),
                    pg_catalog.char_length(task), pg_catalog.octet_length(task),
                    pg_catalog.char_length(dedupe_key), pg_catalog.octet_length(dedupe_key)
               FROM taskboard.jobs WHERE id = %s$$, :wide_id),
    $$VALUES (200, 800, 200, 800, 400, 1600)$$,
    'the limits count characters: 800, 800 and 1600 bytes of four-byte characters are within them'
);
\else
SELECT skip('the database encoding is not UTF8: no four-byte characters to try', 4);
\endif

-- Positional calls reach the same single signature.
SET LOCAL ROLE taskboard_producer;
SELECT lives_ok($$SELECT taskboard.enqueue('positional', '{"a": 1}', 'enqueue-positional')$$,
    'enqueue can also be called with positional arguments');
RESET ROLE;

SELECT is(
    (SELECT payload FROM taskboard.jobs WHERE queue = 'enqueue-positional'),
    '{"a": 1}'::jsonb,
    'positional arguments land in task, payload, queue order'
);

-- The trace context ---------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'traced', queue => 'enqueue-trace',
    trace_context => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "a=1"}')
    AS traced_id \gset
SELECT taskboard.enqueue(task => 'untraced', queue => 'enqueue-trace') AS untraced_id \gset
RESET ROLE;

SELECT is(
    (SELECT trace_context FROM taskboard.jobs WHERE id = :traced_id),
    '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "a=1"}'::jsonb,
    'enqueue stores the trace context it is given with the job'
);
SELECT is(
    (SELECT trace_context FROM taskboard.jobs WHERE id = :untraced_id),
    NULL,
    'without a trace context the job stores none'
);

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', trace_context => '["00-x"]')$$,
    '22023', NULL, 'a trace context that is not a JSON object is refused');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', trace_context => '{"traceparent": 1}')$$,
    '22023', NULL, 'a trace context with a value that is not a string is refused');
SELECT throws_ok(
    $$SELECT taskboard.enqueue(task => 't',
        trace_context => pg_catalog.jsonb_build_object('tracestate', pg_catalog.repeat('x', 8200)))$$,
    '22023', NULL, 'a trace context longer than 8192 bytes is refused');
SELECT lives_ok(
    $$SELECT taskboard.enqueue('t', '{}', 'enqueue-trace', NULL, 0, 5, NULL, '{"traceparent": "x"}')$$,
    'the trace context can be passed by position, last');
RESET ROLE;

-- run_at inside the years 1 to 9999 -------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_like($$SELECT taskboard.enqueue('t', run_at => '10000-01-01 00:00:00+00')$$,
    'run_at must be between 0001-01-01 and 9999-12-31, got %', 'a producer cannot enqueue for the year 10000');
SELECT throws_like($$SELECT taskboard.enqueue('t', run_at => '0001-01-01 00:00:00+00'::timestamptz - interval '1 second')$$,
    'run_at must be between 0001-01-01 and 9999-12-31, got %', 'a producer cannot enqueue before the year 1');
SELECT lives_ok($$SELECT taskboard.enqueue('t', run_at => '9999-12-31 00:00:00+00')$$,
    'a producer may enqueue for the year 9999');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
