-- pause(queue): from the next claim on, a paused queue hands out nothing,
-- to every worker, while its running jobs renew, complete and fail as usual;
-- queue_stats shows it paused. Admins only; bad input raises 22023 and
-- writes nothing. A pause wins over a limit with room. Concurrent claimers
-- are raced in tests/sql/test_queue_control.py.

BEGIN;
SELECT plan(15);

-- Who may: admins only ---------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.pause('qc')$$, '42501', NULL, 'a producer cannot pause a queue');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.pause('qc')$$, '42501', NULL, 'a worker cannot pause a queue');
SELECT throws_ok($$SELECT * FROM taskboard.queues$$, '42501', NULL, 'a worker cannot read taskboard.queues');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pause(NULL)$$, '22023', 'queue must not be NULL or empty',
    'pause refuses a NULL queue');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.queues WHERE queue = 'qc')::integer, 0,
    'refused calls wrote nothing');

-- Pause -----------------------------------------------------------------------------

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
