-- queue_overview(recent): each queue as it stands: queued, running and
-- runnable jobs, since when the longest-waiting runnable job waits, dead and
-- cancelled jobs kept, what finished within `recent`, and the queue's
-- settings; never counting finished jobs older than `recent`. Every role
-- may read it; bad input raises 22023.
--
-- Jobs are written as taskboard_owner in the states the test needs, so the
-- counts do not depend on how claim picks.

BEGIN;
SELECT plan(11);

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT * FROM taskboard.queue_overview(NULL)$$, '22023',
    'recent must be positive and at most 31 days, got NULL', 'recent must not be NULL');
SELECT throws_ok($$SELECT * FROM taskboard.queue_overview(interval '0')$$, '22023', NULL,
    'recent must be positive');
SELECT throws_ok($$SELECT * FROM taskboard.queue_overview(interval '-1 hour')$$, '22023', NULL,
    'a negative recent is refused');
SELECT throws_ok($$SELECT * FROM taskboard.queue_overview(interval '32 days')$$, '22023', NULL,
    'recent is at most 31 days');
RESET ROLE;

-- Jobs in every state ------------------------------------------------------------------

SELECT clock_timestamp() AS now \gset

SET LOCAL ROLE taskboard_owner;
INSERT INTO taskboard.jobs (queue, task, state, run_at, attempt, max_attempts,
                            lease_token, lease_expires_at, claimed_by, finished_at)
VALUES
    -- Queued: due ten minutes ago (the oldest runnable), due now, and due in an hour.
    ('ov-a', 't', 'queued',    :'now'::timestamptz - interval '10 minutes', 0, 3, NULL, NULL, NULL, NULL),
    ('ov-a', 't', 'queued',    :'now', 0, 3, NULL, NULL, NULL, NULL),
    ('ov-a', 't', 'queued',    :'now'::timestamptz + interval '1 hour', 0, 3, NULL, NULL, NULL, NULL),
    -- Running: a live lease, an expired one with attempts left (runnable),
    -- and an expired one out of attempts (claim buries it: not runnable).
    ('ov-a', 't', 'running',   :'now', 1, 3, gen_random_uuid(), :'now'::timestamptz + interval '1 minute', 'w', NULL),
    ('ov-a', 't', 'running',   :'now', 1, 3, gen_random_uuid(), :'now'::timestamptz - interval '1 minute', 'w', NULL),
    ('ov-a', 't', 'running',   :'now', 3, 3, gen_random_uuid(), :'now'::timestamptz - interval '20 minutes', 'w', NULL),
    -- Finished within the hour, and long ago.
    ('ov-a', 't', 'succeeded', :'now', 1, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '5 minutes'),
    ('ov-a', 't', 'succeeded', :'now', 1, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '2 hours'),
    ('ov-a', 't', 'dead',      :'now', 3, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '5 minutes'),
    ('ov-a', 't', 'dead',      :'now', 3, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '3 days'),
    ('ov-a', 't', 'cancelled', :'now', 0, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '1 minute'),
    -- A queue whose only job finished two hours ago.
    ('ov-c', 't', 'succeeded', :'now', 1, 3, NULL, NULL, NULL, :'now'::timestamptz - interval '2 hours');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit('ov-a', 5);
SELECT taskboard.pause('ov-b');
RESET ROLE;

-- What it shows ----------------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    $$SELECT queued, running, runnable, dead, cancelled, succeeded_recent, dead_recent, cancelled_recent,
             paused, max_running
        FROM taskboard.queue_overview() WHERE queue = 'ov-a'$$,
    $$VALUES (3::bigint, 3::bigint, 3::bigint, 2::bigint, 1::bigint, 1::bigint, 1::bigint, 1::bigint, false, 5)$$,
    'a queue''s row: 3 queued, 3 running, 3 runnable (2 due, 1 expired with attempts left), all dead and cancelled, the hour''s finishes, its limit'
);
SELECT is(
    (SELECT oldest_runnable_at FROM taskboard.queue_overview() WHERE queue = 'ov-a'),
    :'now'::timestamptz - interval '10 minutes',
    'oldest_runnable_at is the run_at of the job that has waited longest'
);
SELECT results_eq(
    $$SELECT queued, running, runnable, oldest_runnable_at, dead, succeeded_recent, paused, max_running
        FROM taskboard.queue_overview() WHERE queue = 'ov-b'$$,
    $$VALUES (0::bigint, 0::bigint, 0::bigint, NULL::timestamptz, 0::bigint, 0::bigint, true, NULL::integer)$$,
    'a queue with settings and no jobs is listed, paused'
);
SELECT is_empty(
    $$SELECT * FROM taskboard.queue_overview() WHERE queue = 'ov-c'$$,
    'a queue whose jobs all finished before `recent` is not listed'
);
SELECT results_eq(
    $$SELECT succeeded_recent FROM taskboard.queue_overview(interval '3 hours') WHERE queue = 'ov-c'$$,
    $$VALUES (1::bigint)$$,
    'with a longer `recent` it is'
);
SELECT ok(
    (SELECT pg_catalog.array_agg(queue ORDER BY queue) = pg_catalog.array_agg(queue)
       FROM taskboard.queue_overview(interval '3 hours')),
    'queues come ordered by name'
);
RESET ROLE;

-- recent bounded by the time it gives ---------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_like($$SELECT * FROM taskboard.queue_overview('12000 mon -360000 days 11 hours')$$,
    'recent must be positive and at most 31 days, got %', 'a producer cannot ask for years of months less days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
