-- resume(queue): a resumed queue hands out its jobs again. True when the
-- call resumed it, false when it was not paused or has no settings.
-- Admins only; bad input raises 22023.

BEGIN;
SELECT plan(6);

-- Who may: admins only ---------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.resume('qc')$$, '42501', NULL, 'a worker cannot resume a queue');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.resume('')$$, '22023', 'queue must not be NULL or empty',
    'resume refuses an empty queue');
RESET ROLE;

-- Resume ----------------------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{"n": 2}', 'qc') AS b \gset
SELECT taskboard.enqueue('t', '{"n": 3}', 'qc') AS c \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.pause('qc') AS paused \gset
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

SELECT * FROM finish();
ROLLBACK;
