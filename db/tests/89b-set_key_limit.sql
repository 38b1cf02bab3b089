-- set_key_limit(queue, max_running_per_key): the queue's limit of jobs per
-- concurrency key, kept on the queue's row beside its other settings.
-- Admins only; bad input raises 22023 and writes nothing; the same limit
-- again changes nothing; NULL removes it; the queue's other settings stay.
-- (What claim does under it is in the claim files.)

BEGIN;
SELECT plan(14);

-- Who may: admins only.
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.set_key_limit('kq', 1)$$, '42501', NULL,
    'a worker cannot set a key limit');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.set_key_limit('kq', 1)$$, '42501', NULL,
    'nor can a producer');
RESET ROLE;

-- Bad input.
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.set_key_limit(repeat('q', 201), 3)$$, '22023',
    'queue must be at most 200 characters, got 201', 'a queue name over 200 characters is refused');
SELECT throws_ok($$SELECT taskboard.set_key_limit(NULL, 3)$$, '22023', NULL, 'a NULL queue is refused');
SELECT throws_ok($$SELECT taskboard.set_key_limit('kq', 0)$$, '22023',
    'max_running_per_key must be at least 1 or NULL (no key limit), got 0; pause the queue to stop it',
    'a key limit of 0 is refused, naming pause');
SELECT throws_ok($$SELECT taskboard.set_key_limit('kq', -1)$$, '22023', NULL, 'a negative key limit is refused');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queues WHERE queue = 'kq'$$, 'refused calls write nothing');

-- A limit, the same again, a change, its removal.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_limit('kq', 5), true, 'the queue has a limit of its own');
SELECT is(taskboard.set_key_limit('kq', 1), true, 'set_key_limit sets a key limit');
SELECT is(taskboard.set_key_limit('kq', 1), false, 'the same key limit again changes nothing');
SELECT is(taskboard.set_key_limit('kq', 3), true, 'a new key limit changes it');
RESET ROLE;
SELECT results_eq($$SELECT max_running, max_running_per_key, paused FROM taskboard.queues WHERE queue = 'kq'$$,
    $$VALUES (5, 3, false)$$, 'the key limit sits beside the queue''s other settings');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_key_limit('kq', NULL), true, 'NULL removes the key limit');
RESET ROLE;
SELECT results_eq($$SELECT max_running, max_running_per_key FROM taskboard.queues WHERE queue = 'kq'$$,
    $$VALUES (5, NULL::integer)$$, 'and leaves the queue limit');

SELECT * FROM finish();
ROLLBACK;
