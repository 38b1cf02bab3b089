-- rate_full_keys(queue, clock, room, full_keys, known, rate_starts,
-- rate_per): the bound of claim's pickers under a rate limit per key,
-- called directly. `known` and the keys whose window of rate_per ending at
-- `clock` holds rate_starts starts (taskboard.queue_starts of this queue),
-- among the keys of the first 16 x room queued jobs due (those of full_keys
-- and of keys found full read past) and of the expired leases it may
-- reclaim; while fewer than 16 x room of the jobs read are of keys with
-- room or of none, and the queue has more, it looks again twice as far.
-- Each key once. It writes nothing. Internal: the application roles
-- cannot call it; claim does (24-claim_rate_limit).

BEGIN;
SELECT plan(12);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.rate_full_keys('rf', now(), 1, '{}', '{}', 1, interval '1 hour')$$,
    '42501', NULL, 'an admin cannot call rate_full_keys');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.rate_full_keys('rf', now(), 1, '{}', '{}', 1, interval '1 hour')$$,
    '42501', NULL, 'a worker cannot call rate_full_keys');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Queued and due: two of key a, one each of b, c and d, one without a key.
-- Queued but due in an hour: one of key g. Expired leases with an attempt
-- left: key e; with none: key f. Another queue: a queued job of key h.
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 5, concurrency_key => 'a') AS a1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 5, concurrency_key => 'a') AS a2 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 4, concurrency_key => 'b') AS b1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 3, concurrency_key => 'c') AS c1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 2, concurrency_key => 'd') AS d1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 1) AS n1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', priority => 9, concurrency_key => 'g',
                         run_at => now() + interval '1 hour') AS g1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', concurrency_key => 'e', max_attempts => 5) AS e_expired \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf', concurrency_key => 'f', max_attempts => 1) AS f_spent \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf-other', concurrency_key => 'h') AS h1 \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '10 minutes', lease_expires_at = now() - interval '1 second'
 WHERE id IN (:e_expired, :f_spent);

-- Starts within the hour: a once, b twice, e, f, g and h once; c two hours
-- ago; d's only start is another queue's.
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('rf', 'a', now() - interval '1 minute'),
       ('rf', 'b', now() - interval '1 minute'),
       ('rf', 'b', now() - interval '2 minutes'),
       ('rf', 'e', now() - interval '1 minute'),
       ('rf', 'f', now() - interval '1 minute'),
       ('rf', 'g', now() - interval '1 minute'),
       ('rf', 'h', now() - interval '1 minute'),
       ('rf', 'c', now() - interval '2 hours'),
       ('rf-other', 'd', now() - interval '1 minute');

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue = 'rf';

-- The keys, sorted: the function gives them in no set order after `known`.
CREATE FUNCTION pg_temp.sorted(keys text[]) RETURNS text[] LANGUAGE sql
AS $$SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM unnest(keys) AS k$$;

-- Which keys are full -------------------------------------------------------------------------

SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{}', '{}', 1, interval '1 hour')),
          '{a,b,e}'::text[],
    'one start an hour: a and b (queued, a start within the hour) and e (an expired lease) are full, each once');
SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{}', '{}', 2, interval '1 hour')),
          '{b}'::text[],
    'two starts an hour: only b, with two, is full');
SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{}', '{}', 1, interval '3 hours')),
          '{a,b,c,e}'::text[],
    'a window of three hours counts c''s older start too');
SELECT is((taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{}', '{zz}', 1, interval '1 hour'))[1:1],
          '{zz}'::text[],
    'the keys of `known` come first');
SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{}', '{a}', 1, interval '1 hour')),
          '{a,b,e}'::text[],
    'a key of `known` is not counted again: a is there once');
SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf', clock_timestamp(), 1, '{a}', '{}', 1, interval '1 hour')),
          '{b,e}'::text[],
    'the queued jobs of full_keys are read past, and those keys are not returned');

-- How far it reads ------------------------------------------------------------------------------

-- Sixteen queued jobs of sixteen full keys ahead of one of key x, full too.
SELECT array_agg(taskboard.enqueue(task => 't', queue => 'rf16', priority => 5,
                                   concurrency_key => 'k' || lpad(i::text, 2, '0')) ORDER BY i) AS k16
  FROM generate_series(1, 16) AS i \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf16', priority => 0, concurrency_key => 'x') AS x1 \gset
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
SELECT 'rf16', k, now() - interval '1 minute'
  FROM unnest(ARRAY['x'] || ARRAY(SELECT 'k' || lpad(i::text, 2, '0') FROM generate_series(1, 16) AS i)) AS k;
-- Sixteen queued jobs without a key ahead of one of key y, full.
SELECT array_agg(taskboard.enqueue(task => 't', queue => 'rf-stop', priority => 5)) AS n16
  FROM generate_series(1, 16) \gset
SELECT taskboard.enqueue(task => 't', queue => 'rf-stop', priority => 0, concurrency_key => 'y') AS y1 \gset
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('rf-stop', 'y', now() - interval '1 minute');

SELECT is(pg_temp.sorted(taskboard.rate_full_keys('rf16', clock_timestamp(), 1, '{}', '{}', 1, interval '1 hour')),
          pg_temp.sorted(ARRAY['x'] || ARRAY(SELECT 'k' || lpad(i::text, 2, '0') FROM generate_series(1, 16) AS i)),
    'sixteen jobs read, all of full keys: it looks again twice as far and finds x full behind them');
SELECT is(taskboard.rate_full_keys('rf-stop', clock_timestamp(), 1, '{}', '{}', 1, interval '1 hour'), '{}'::text[],
    'sixteen jobs read without a key: it looks no further, and the window of y behind them is not counted');

-- Nothing written --------------------------------------------------------------------------------

SELECT is((SELECT (count(*), count(*) FILTER (WHERE queue = 'rf'))
             FROM taskboard.queue_starts WHERE queue IN ('rf', 'rf-other', 'rf16', 'rf-stop')),
          (27::bigint, 8::bigint),
    'rate_full_keys writes no start and deletes none');
SELECT is((SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM taskboard.jobs WHERE queue = 'rf') AS d),
          0::bigint,
    'nor changes a job of the queue');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
