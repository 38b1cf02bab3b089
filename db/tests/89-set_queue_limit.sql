-- set_queue_limit(queue, max_running): claim never starts more than
-- max_running jobs of the queue at once; finishing one makes room for one;
-- an expired lease is reclaimed even at the limit (it adds no running job);
-- lowering the limit stops nothing that runs; NULL removes it; queue_stats
-- shows it. Admins only; bad input raises 22023. Concurrent claimers are
-- raced in tests/sql/test_queue_control.py.

BEGIN;
SELECT plan(19);

-- Who may: admins only ---------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', 1)$$, '42501', NULL, 'a worker cannot limit a queue');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.set_queue_limit(repeat('q', 201), 3)$$, '22023',
    'queue must be at most 200 characters, got 201', 'set_queue_limit refuses a queue name over 200 characters');
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', 0)$$, '22023',
    'max_running must be at least 1 or NULL (no limit), got 0; pause the queue to stop it',
    'a limit of 0 is refused, naming pause');
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', -5)$$, '22023', NULL, 'a negative limit is refused');
RESET ROLE;

-- A limit ---------------------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(*) AS enqueued FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[6]), 'ql') \gset
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_limit('ql', 2), true, 'set_queue_limit sets a limit');
SELECT is(taskboard.set_queue_limit('ql', 2), false, 'the same limit again changes nothing');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.claim('ql', 'w1', 10))::integer, 2,
    'a claim of 10 from a queue limited to 2 starts 2');
SELECT is_empty($$SELECT * FROM taskboard.claim('ql', 'w2', 10)$$,
    'another claim starts none while 2 run');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT max_running FROM taskboard.queue_stats WHERE queue = 'ql' AND state = 'running'), 2,
    'queue_stats shows the limit');
SELECT is((SELECT jobs FROM taskboard.queue_stats WHERE queue = 'ql' AND state = 'running'), 2::bigint,
    'and 2 jobs running');
RESET ROLE;

-- Finishing one makes room for one.
SELECT id AS done_id, lease_token AS done_token FROM taskboard.jobs WHERE queue = 'ql' AND state = 'running' ORDER BY id LIMIT 1 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:done_id, :'done_token'::uuid), true, 'one of them completes');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.claim('ql', 'w2', 10))::integer, 1,
    'and the next claim starts exactly one');
RESET ROLE;

-- An expired lease is reclaimed even at the limit: it does not add a running job.
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second'
 WHERE id = (SELECT id FROM taskboard.jobs WHERE queue = 'ql' AND state = 'running' ORDER BY id LIMIT 1);
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.claim('ql', 'w4', 10))::integer, 1,
    'at the limit, a claim still reclaims the expired job, and starts nothing new');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'ql' AND state = 'running')::integer, 2,
    'still 2 running');

-- Lowering the limit stops nothing that runs; raising it starts more.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_limit('ql', 1), true, 'the limit is lowered to 1');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('ql', 'w5', 10)$$, 'over a lowered limit nothing starts');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'ql' AND state = 'running')::integer, 2,
    'and the 2 running jobs carry on');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_limit('ql', NULL), true, 'NULL removes the limit');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.claim('ql', 'w5', 10))::integer, 3,
    'an unlimited queue hands out all its runnable jobs');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
