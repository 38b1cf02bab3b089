-- set_rate_limit(queue, starts, per, by_key): the queue's rate limit, kept
-- on the queue's row beside its other settings. Admins only; bad input
-- raises 22023 and writes nothing; the same limit again changes nothing;
-- NULL removes it, forgets the queue's starts and writes no row for a queue
-- that has none. (What claim does under it is in 24-claim_rate_limit.)

BEGIN;
SELECT plan(25);

-- Who may: admins only.
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '1 second')$$, '42501', NULL,
    'a worker cannot set a rate limit');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '1 second')$$, '42501', NULL,
    'nor can a producer');
RESET ROLE;

-- Bad input.
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.set_rate_limit(repeat('q', 201), 5, '1 second')$$, '22023',
    'queue must be at most 200 characters, got 201', 'a queue name over 200 characters is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit(NULL, 5, '1 second')$$, '22023', NULL, 'a NULL queue is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('', 5, '1 second')$$, '22023', NULL, 'an empty queue is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, NULL)$$, '22023',
    'starts and per must both be given, or both be NULL (no rate limit), got starts 5 and per NULL',
    'starts without per is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', NULL, '1 second')$$, '22023',
    'starts and per must both be given, or both be NULL (no rate limit), got starts NULL and per 00:00:01',
    'per without starts is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 0, '1 second')$$, '22023',
    'starts must be between 1 and 100000 or NULL (no rate limit), got 0; pause the queue to stop it',
    'a limit of 0 starts is refused, naming pause');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 100001, '1 second')$$, '22023', NULL,
    'more than 100000 starts per window is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '0 seconds')$$, '22023',
    'per must be positive, got 00:00:00', 'a window of 0 is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '-1 second')$$, '22023', NULL,
    'a negative window is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '32 days')$$, '22023',
    'per must be at most 31 days, got 32 days', 'a window over 31 days is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '1 year')$$, '22023',
    'per must be at most 31 days, got 1 year', 'a window of a year is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', 5, '1 second', NULL)$$, '22023',
    'by_key must be true or false, got NULL', 'a NULL by_key is refused');
SELECT throws_ok($$SELECT taskboard.set_rate_limit('rq', NULL, NULL, true)$$, '22023',
    'by_key needs a rate limit: give starts and per, or by_key false to remove it',
    'by_key without a limit is refused');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queues WHERE queue = 'rq'$$, 'refused calls write nothing');

-- Removing a limit a queue does not have.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_rate_limit('rq', NULL, NULL), false, 'removing a rate limit the queue never had changes nothing');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queues WHERE queue = 'rq'$$, 'and writes no row for the queue');

-- A limit, the same again, a change, its removal.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_limit('rq', 5), true, 'the queue has a limit of its own');
SELECT is(taskboard.set_rate_limit('rq', 10, '1 minute'), true, 'set_rate_limit sets a rate limit');
SELECT is(taskboard.set_rate_limit('rq', 10, '60 seconds'), false, 'the same rate limit again changes nothing');
SELECT is(taskboard.set_rate_limit('rq', 10, '1 minute', by_key => true), true, 'by_key changes it');
RESET ROLE;
SELECT results_eq($$SELECT max_running, rate_starts, rate_per, rate_by_key FROM taskboard.queues WHERE queue = 'rq'$$,
    $$VALUES (5, 10, interval '1 minute', true)$$, 'the rate limit sits beside the queue''s other settings');
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('rq', 'a', clock_timestamp()), ('other', NULL, clock_timestamp());
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_rate_limit('rq', NULL, NULL), true, 'NULL removes the rate limit');
RESET ROLE;
SELECT results_eq(
    $$SELECT q.max_running, q.rate_starts, q.rate_per, q.rate_by_key,
             (SELECT count(*) FROM taskboard.queue_starts AS s WHERE s.queue = 'rq'),
             (SELECT count(*) FROM taskboard.queue_starts AS s WHERE s.queue = 'other')
        FROM taskboard.queues AS q WHERE q.queue = 'rq'$$,
    $$VALUES (5, NULL::integer, NULL::interval, false, 0::bigint, 1::bigint)$$,
    'and forgets the queue''s starts, not another''s, and leaves the queue limit');

SELECT * FROM finish();
ROLLBACK;
