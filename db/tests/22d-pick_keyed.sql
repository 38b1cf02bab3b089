-- pick_keyed(queue, clock, room, full_keys, max_running_per_key, rate_starts,
-- rate_per, rate_by_key, reclaims): claim's picker per concurrency key,
-- called directly. Of the queued jobs due by `clock`, those of full_keys
-- read past, it reads sixteen times `room` in claim order and takes each
-- key's first ones up to its room: max_running_per_key less its holders
-- (running, or cancelled under a lease not yet ended), and under a rate per
-- key the starts left in its window less the claim's reclaims of that key;
-- jobs without a key are not limited; at most `room` in all. It writes
-- nothing. Internal: the application roles cannot call it; claim does
-- (23-claim_key_limit, 24-claim_rate_limit).

BEGIN;
SELECT plan(12);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pick_keyed('pk', clock_timestamp(), 10, '{}', 1, NULL, NULL, false, '{}')$$,
    '42501', NULL, 'an admin cannot call pick_keyed');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.pick_keyed('pk', clock_timestamp(), 10, '{}', 1, NULL, NULL, false, '{}')$$,
    '42501', NULL, 'a worker cannot call pick_keyed');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Holders: a running job of key a; a job of key c cancelled under a lease
-- that runs another hour; one of key d whose cancelled lease has ended.
SELECT taskboard.enqueue(task => 't', queue => 'pk', concurrency_key => 'a') AS a_run \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', concurrency_key => 'c') AS c_held \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', concurrency_key => 'd') AS d_old \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '1 minute', lease_expires_at = now() + interval '1 hour'
 WHERE id = :a_run;
UPDATE taskboard.jobs
   SET state = 'cancelled', finished_at = now() - interval '1 minute',
       held_until = CASE WHEN id = :c_held THEN now() + interval '1 hour' ELSE now() - interval '1 second' END
 WHERE id IN (:c_held, :d_old);

-- The queued jobs, in claim order: a full key's first, then a, b, c, d,
-- those without a key, and one without a key due in an hour.
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 9, concurrency_key => 'z') AS z1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 3, concurrency_key => 'a') AS a1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 3, concurrency_key => 'a') AS a2 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 2, concurrency_key => 'b') AS b1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 2, concurrency_key => 'b') AS b2 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 2, concurrency_key => 'c') AS c1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 1, concurrency_key => 'd') AS d1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 0) AS n1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 0) AS n2 \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk', priority => 0, run_at => now() + interval '1 hour') AS n_later \gset

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue = 'pk';

-- Under a key limit -----------------------------------------------------------------------

SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 20, '{z}', 1, NULL, NULL, false, '{}'),
          ARRAY[:b1, :d1, :n1, :n2]::bigint[],
    'a limit of 1 a key: nothing of a (running) or c (held), the first of b and d, every job without a key');
SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 20, '{z}', 2, NULL, NULL, false, '{}'),
          ARRAY[:a1, :b1, :b2, :c1, :d1, :n1, :n2]::bigint[],
    'a limit of 2 a key: one more of a and c, two of b, in claim order');
SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 3, '{z}', 2, NULL, NULL, false, '{}'),
          ARRAY[:a1, :b1, :b2]::bigint[],
    'at most `room` in all, the first in claim order');
SELECT is(taskboard.pick_keyed('pk', clock_timestamp() + interval '2 hours', 20, '{z}', 1, NULL, NULL, false, '{}'),
          ARRAY[:b1, :c1, :d1, :n1, :n2, :n_later]::bigint[],
    'by a later clock the cancelled lease of c has ended and the later job is due');

-- Under a rate limit per key ----------------------------------------------------------------

INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('pk', 'b', now() - interval '1 minute'),
       ('pk', 'a', now() - interval '2 hours'),
       ('pk-other', 'c', now() - interval '1 minute'),
       ('pk-other', 'c', now() - interval '1 minute');

SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 20, '{z}', NULL, 2, interval '1 hour', true, '{}'),
          ARRAY[:a1, :a2, :b1, :c1, :d1, :n1, :n2]::bigint[],
    'two starts an hour a key: b has one left (a start within the hour), a two (its start is older), c two (starts of another queue do not count)');
SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 20, '{z}', NULL, 2, interval '1 hour', true, ARRAY[:a_run]::bigint[]),
          ARRAY[:a1, :b1, :c1, :d1, :n1, :n2]::bigint[],
    'the claim''s reclaim of key a takes one of a''s starts first');
SELECT is(taskboard.pick_keyed('pk', clock_timestamp(), 20, '{z}', NULL, 2, interval '1 hour', false, ARRAY[:a_run]::bigint[]),
          ARRAY[:a1, :a2, :b1, :b2, :c1, :d1, :n1, :n2]::bigint[],
    'without a key limit or rate_by_key, only full_keys bounds the keys');

-- Sixteen times the room, full keys read past ------------------------------------------------

SELECT taskboard.enqueue(task => 't', queue => 'pk16', concurrency_key => 'a') AS k_run \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '1 minute', lease_expires_at = now() + interval '1 hour'
 WHERE id = :k_run;
SELECT count(taskboard.enqueue(task => 't', queue => 'pk16', priority => 5, concurrency_key => 'a')) AS a16
  FROM generate_series(1, 16) \gset
SELECT taskboard.enqueue(task => 't', queue => 'pk16', priority => 0, concurrency_key => 'b') AS k_b \gset

SELECT is(taskboard.pick_keyed('pk16', clock_timestamp(), 1, '{}', 1, NULL, NULL, false, '{}'), '{}'::bigint[],
    'with room for one it reads sixteen jobs: all of key a, which has no room, and not the job of b behind them');
SELECT is(taskboard.pick_keyed('pk16', clock_timestamp(), 1, '{a}', 1, NULL, NULL, false, '{}'), ARRAY[:k_b]::bigint[],
    'with key a among full_keys its jobs are read past, and the job of b behind them is found');

-- Nothing written ----------------------------------------------------------------------------

SELECT is((SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM taskboard.jobs WHERE queue = 'pk') AS d),
          0::bigint,
    'pick_keyed leaves every job of the queue as it was: each picked job is still queued');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
