-- Queue control: pause, resume and set_queue_limit (admin), honoured by
-- claim for every worker. A paused queue hands out nothing while its running
-- jobs renew, complete and fail as usual; a limited queue never has more
-- than max_running jobs running; queue_stats shows both. Bad input raises
-- 22023 and changes nothing. Concurrent claimers are raced in
-- tests/test_queue_control.py.

BEGIN;
SELECT plan(40);

-- Who may: admins only ---------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.pause('qc')$$, '42501', NULL, 'a producer cannot pause a queue');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.pause('qc')$$, '42501', NULL, 'a worker cannot pause a queue');
SELECT throws_ok($$SELECT taskboard.resume('qc')$$, '42501', NULL, 'a worker cannot resume a queue');
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', 1)$$, '42501', NULL, 'a worker cannot limit a queue');
SELECT throws_ok($$SELECT * FROM taskboard.queues$$, '42501', NULL, 'a worker cannot read taskboard.queues');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pause(NULL)$$, '22023', 'queue must not be NULL or empty',
    'pause refuses a NULL queue');
SELECT throws_ok($$SELECT taskboard.resume('')$$, '22023', 'queue must not be NULL or empty',
    'resume refuses an empty queue');
SELECT throws_ok($$SELECT taskboard.set_queue_limit(repeat('q', 201), 3)$$, '22023',
    'queue must be at most 200 characters, got 201', 'set_queue_limit refuses a queue name over 200 characters');
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', 0)$$, '22023',
    'max_running must be at least 1 or NULL (no limit), got 0; pause the queue to stop it',
    'a limit of 0 is refused, naming pause');
SELECT throws_ok($$SELECT taskboard.set_queue_limit('qc', -5)$$, '22023', NULL, 'a negative limit is refused');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.queues WHERE queue = 'qc')::integer, 0,
    'refused calls wrote nothing');

-- Pause and resume -----------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{"n": 1}', 'qc') AS a \gset
SELECT taskboard.enqueue('t', '{"n": 2}', 'qc') AS b \gset
SELECT taskboard.enqueue('t', '{"n": 3}', 'qc') AS c \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS running_id, token AS running_token FROM taskboard.claim('qc', 'w1', 1) \gset
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.pause('qc'), true, 'pause pauses a queue that was not paused');
SELECT is(taskboard.pause('qc'), false, 'pausing it again says it already was');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('qc', 'w2', 10)$$, 'a paused queue hands out nothing');
SELECT isnt(taskboard.renew(:running_id, :'running_token'::uuid), NULL, 'its running job still renews');
SELECT is(taskboard.lease_state(:running_id, :'running_token'::uuid), 'held', 'and is still held');
SELECT is(taskboard.complete(:running_id, :'running_token'::uuid), true, 'and completes');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT paused FROM taskboard.queue_stats WHERE queue = 'qc' AND state = 'queued'), true,
    'queue_stats shows the queue paused');
SELECT is((SELECT runnable FROM taskboard.queue_stats WHERE queue = 'qc' AND state = 'queued'), 2::bigint,
    'and its jobs still counted as runnable were it not paused');
SELECT is((SELECT paused FROM taskboard.queue_stats WHERE queue = 'other' LIMIT 1), NULL,
    'a queue with no jobs has no row');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.resume('qc'), true, 'resume resumes a paused queue');
SELECT is(taskboard.resume('qc'), false, 'resuming it again says it was not paused');
SELECT is(taskboard.resume('never-paused'), false, 'resuming a queue with no settings changes nothing');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.claim('qc', 'w2', 10))::integer, 2,
    'a resumed queue hands out its jobs again');
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

-- Pause wins over a limit with room.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qp') AS p1 \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit('qp', 5) AS limited, taskboard.pause('qp') AS paused \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('qp', 'w1', 5)$$, 'a paused queue with room under its limit hands out nothing');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
