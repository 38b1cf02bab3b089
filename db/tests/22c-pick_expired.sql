-- pick_expired(queue, clock, most, rate_full_keys, rate_starts, rate_per,
-- rate_by_key): claim's picker of reclaims, called directly. It returns the
-- first `most` running jobs of the queue whose lease expired by `clock` with
-- an attempt left, in claim order (priority, run_at, id), leaves out the
-- keys of rate_full_keys and, under a rate per key, takes a key's first ones
-- only up to the starts left in its window (taskboard.queue_starts of this
-- queue after clock - rate_per). It writes nothing. Internal: the
-- application roles cannot call it; claim does (20-claim, 24-claim_rate_limit).

BEGIN;
SELECT plan(12);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pick_expired('pe', now(), 10, '{}', NULL, NULL, false)$$,
    '42501', NULL, 'an admin cannot call pick_expired');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.pick_expired('pe', now(), 10, '{}', NULL, NULL, false)$$,
    '42501', NULL, 'a worker cannot call pick_expired');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Expired leases with an attempt left: two of key a (the later one due
-- earlier), one of key b, one without a key.
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 5, concurrency_key => 'a') AS a1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 5, concurrency_key => 'a') AS a2 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 1, concurrency_key => 'b') AS b1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 0) AS n1 \gset
-- Not reclaimable now: a spent lease, a live one, a queued job, another queue's.
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 9, max_attempts => 1) AS spent \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 9) AS live \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe', priority => 9) AS queued \gset
SELECT taskboard.enqueue(task => 't', queue => 'pe-other', priority => 9, concurrency_key => 'a') AS other \gset

UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '10 minutes',
       lease_expires_at = CASE WHEN id = :live THEN now() + interval '1 hour'
                               ELSE now() - interval '1 second' END
 WHERE id IN (:a1, :a2, :b1, :n1, :spent, :live, :other);
UPDATE taskboard.jobs SET run_at = run_at - interval '1 minute' WHERE id = :a2;

-- Starts logged: key b within the hour, key a two hours ago, and another
-- queue's key a within the hour.
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('pe', 'b', now() - interval '1 minute'),
       ('pe', 'a', now() - interval '2 hours'),
       ('pe-other', 'a', now() - interval '1 minute');

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue = 'pe';

-- Which ones, in which order ----------------------------------------------------------

SELECT is(taskboard.pick_expired('pe', now(), 10, '{}', NULL, NULL, false),
          ARRAY[:a2, :a1, :b1, :n1]::bigint[],
    'pick_expired gives the expired leases with an attempt left, by priority, then run_at, then id');
SELECT is(taskboard.pick_expired('pe', now(), 2, '{}', NULL, NULL, false),
          ARRAY[:a2, :a1]::bigint[],
    'at most `most` of them, the first in claim order');
SELECT is(taskboard.pick_expired('pe', now() + interval '2 hours', 10, '{}', NULL, NULL, false),
          ARRAY[:live, :a2, :a1, :b1, :n1]::bigint[],
    'a lease counts as expired by the clock given: two hours on, the live one is reclaimable too');
SELECT is(taskboard.pick_expired('pe-empty', now(), 10, '{}', NULL, NULL, false), '{}'::bigint[],
    'a queue without expired leases gives none');
SELECT is(taskboard.pick_expired('pe', now(), 10, '{a}', NULL, NULL, false),
          ARRAY[:b1, :n1]::bigint[],
    'the leases of the keys in rate_full_keys are left out; those without a key are not');

-- Under a rate limit per key ---------------------------------------------------------------

SELECT is(taskboard.pick_expired('pe', now(), 10, '{}', 1, interval '1 hour', true),
          ARRAY[:a2, :n1]::bigint[],
    'one start an hour per key: key a (its start is older) gives its first only, key b (a start within the hour) none');
SELECT is(taskboard.pick_expired('pe', now(), 10, '{}', 2, interval '1 hour', true),
          ARRAY[:a2, :a1, :b1, :n1]::bigint[],
    'two starts an hour per key: key a has room for both, key b for one');
SELECT is(taskboard.pick_expired('pe', now(), 10, '{}', 2, interval '3 hours', true),
          ARRAY[:a2, :b1, :n1]::bigint[],
    'a window of three hours counts key a''s older start too: room for one of a');
SELECT is(taskboard.pick_expired('pe', now(), 10, '{}', 1, interval '1 hour', false),
          ARRAY[:a2, :a1, :b1, :n1]::bigint[],
    'without rate_by_key no key''s window is counted');

-- Nothing written ---------------------------------------------------------------------------

SELECT is((SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM taskboard.jobs WHERE queue = 'pe') AS d),
          0::bigint,
    'pick_expired leaves every job of the queue as it was: no lease taken, no state changed');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
