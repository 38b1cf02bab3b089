-- claim under a queue's rate limit: at most rate_starts starts, reclaims
-- included, in any window of rate_per, counted for the queue or per key;
-- each start logged in queue_starts, starts older than the window
-- forgotten; queue_stats and queue_overview show the window's starts.
-- Time is moved by moving the logged starts back (the window is an hour).

BEGIN;
SELECT plan(31);

-- What a worker's claims took, read back with the jobs' keys as the owner.
CREATE TEMP TABLE got (job_id bigint, attempt integer);
GRANT ALL ON got TO taskboard_worker;

SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', '{}', 'rl')) FROM generate_series(1, 10);
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('rl', 3, '1 hour');
RESET ROLE;

-- The window holds three.
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rl', 'w1', 10)), 3::bigint,
    'a claim of 10 under a limit of 3 per hour starts 3');
SELECT is_empty($$SELECT * FROM taskboard.claim('rl', 'w2', 10)$$,
    'the next claim starts nothing while the window is full');
SELECT results_eq($$SELECT jobs, rate_starts, rate_per, rate_by_key, window_starts
                      FROM taskboard.queue_stats WHERE queue = 'rl' AND state = 'queued'$$,
    $$VALUES (7::bigint, 3, interval '1 hour', false, 3::bigint)$$,
    'queue_stats shows the limit and the three starts in its window; seven wait, queued');
SELECT results_eq($$SELECT runnable, rate_starts, window_starts FROM taskboard.queue_overview() WHERE queue = 'rl'$$,
    $$VALUES (7::bigint, 3, 3::bigint)$$, 'queue_overview shows them too; the jobs held back are still runnable');
RESET ROLE;
SELECT results_eq($$SELECT count(*), min(s.started_at) = max(s.started_at), bool_and(s.started_at = j.started_at)
                      FROM taskboard.queue_starts AS s
                      JOIN taskboard.jobs AS j ON j.queue = s.queue AND j.state = 'running'
                     WHERE s.queue = 'rl'$$,
    $$VALUES (9::bigint, true, true)$$,
    'the log holds the claim''s three starts (3 x 3 joined rows), at the started_at of the jobs');

-- The window moves on: the old starts are forgotten.
UPDATE taskboard.queue_starts SET started_at = started_at - interval '1 hour' WHERE queue = 'rl';
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rl', 'w2', 2)), 2::bigint,
    'once the starts are an hour old, a claim of 2 starts 2');
RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.queue_starts WHERE queue = 'rl'), 2::bigint,
    'and the log forgot the starts older than the window');
UPDATE taskboard.queue_starts SET started_at = started_at - interval '59 minutes' WHERE queue = 'rl';
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rl', 'w2', 10)), 1::bigint,
    'starts 59 minutes old still count: one more fits');
RESET ROLE;

-- A reclaim is a start.
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE queue = 'rl' AND state = 'running' AND claimed_by = 'w1';
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('rl', 'w3', 10)$$,
    'with the window full, an expired lease is not reclaimed either');
RESET ROLE;
UPDATE taskboard.queue_starts SET started_at = started_at - interval '2 hours' WHERE queue = 'rl';
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rl', 'w3', 10) AS c WHERE c.attempt = 2), 3::bigint,
    'once the window moves, a claim of 10 reclaims the three expired leases, and they fill it');
SELECT is_empty($$SELECT * FROM taskboard.claim('rl', 'w3', 10)$$, 'so no queued job starts');
RESET ROLE;

-- Per key.
SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', '{}', 'rk', concurrency_key => k))
  FROM unnest(ARRAY['a', 'a', 'a', 'b', 'b', 'b']) AS k;
SELECT pg_catalog.count(taskboard.enqueue('t', '{}', 'rk')) FROM generate_series(1, 3);
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('rk', 2, '1 hour', by_key => true);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT c.job_id, c.attempt FROM taskboard.claim('rk', 'w1', 100) AS c;
RESET ROLE;
SELECT results_eq($$SELECT j.concurrency_key, count(*)
                      FROM got AS c
                      JOIN taskboard.jobs AS j ON j.id = c.job_id
                     GROUP BY 1 ORDER BY 1 NULLS LAST$$,
    $$VALUES ('a', 2::bigint), ('b', 2::bigint), (NULL, 3::bigint)$$,
    'by key, a claim starts two of each key and every job without a key');
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('rk', 'w2', 100)$$, 'then nothing while both keys'' windows are full');
SELECT results_eq($$SELECT rate_by_key, window_starts FROM taskboard.queue_stats WHERE queue = 'rk' AND state = 'running'$$,
    $$VALUES (true, 2::bigint)$$, 'queue_stats shows the busiest key''s starts');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'rk', concurrency_key => 'c') AS c1 \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('rk', 'w2', 1)$$, format($$VALUES (%s::bigint)$$, :c1),
    'a claim of one finds the job of key c behind the full keys');
RESET ROLE;
-- Key a's window moves on; key b's does not; both have an expired lease.
UPDATE taskboard.queue_starts SET started_at = started_at - interval '2 hours' WHERE queue = 'rk' AND concurrency_key = 'a';
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second', priority = 5
 WHERE id IN (SELECT min(id) FROM taskboard.jobs WHERE queue = 'rk' AND state = 'running' GROUP BY concurrency_key
               HAVING concurrency_key IN ('a', 'b'));
TRUNCATE got;
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT c.job_id, c.attempt FROM taskboard.claim('rk', 'w3', 100) AS c;
RESET ROLE;
SELECT results_eq($$SELECT j.concurrency_key, c.attempt FROM got AS c
                      JOIN taskboard.jobs AS j ON j.id = c.job_id ORDER BY c.attempt DESC, j.concurrency_key$$,
    $$VALUES ('a', 2), ('a', 1)$$,
    'key a''s reclaim takes its window''s first place and its last queued job the second; key b''s expired lease waits');
SELECT results_eq($$SELECT concurrency_key, count(*) FROM taskboard.queue_starts WHERE queue = 'rk'
                     GROUP BY 1 ORDER BY 1 NULLS LAST$$,
    $$VALUES ('a', 2::bigint), ('b', 2::bigint), ('c', 1::bigint)$$,
    'the log holds each start of a key with its key, the reclaim among them, and none without a key');

-- Beside a key limit and a queue limit.
SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', '{}', 'rb', concurrency_key => k))
  FROM unnest(ARRAY['a', 'a', 'a', 'b', 'b', 'b']) AS k;
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('rb', 2, '1 hour', by_key => true);
SELECT taskboard.set_key_limit('rb', 1);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rb', 'w1', 100)), 2::bigint,
    'under a key limit of 1 and a rate of 2 per key, a claim starts one of each key');
RESET ROLE;
UPDATE taskboard.jobs SET state = 'succeeded', lease_token = NULL, lease_expires_at = NULL, finished_at = clock_timestamp()
 WHERE queue = 'rb' AND state = 'running';
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rb', 'w1', 100)), 2::bigint,
    'once they finish, one more of each');
RESET ROLE;
UPDATE taskboard.jobs SET state = 'succeeded', lease_token = NULL, lease_expires_at = NULL, finished_at = clock_timestamp()
 WHERE queue = 'rb' AND state = 'running';
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('rb', 'w1', 100)$$,
    'then none: each key started its two this hour, though none runs');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', '{}', 'rm')) FROM generate_series(1, 5);
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('rm', 3, '1 hour');
SELECT taskboard.set_queue_limit('rm', 2);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rm', 'w1', 10)), 2::bigint,
    'under a queue limit of 2 and a rate of 3, the queue limit binds first');
RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.queue_starts WHERE queue = 'rm'), 2::bigint,
    'only the starts made are logged');

-- Paused, removed, and queues without a rate limit.
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit('rm', NULL);
SELECT taskboard.pause('rm');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('rm', 'w1', 10)$$, 'a paused queue with a rate limit hands out nothing');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.resume('rm');
SELECT taskboard.set_rate_limit('rm', NULL, NULL);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('rm', 'w1', 10)), 3::bigint,
    'with the rate limit removed, the rest start');
SELECT results_eq($$SELECT rate_starts, rate_by_key, window_starts FROM taskboard.queue_stats WHERE queue = 'rm' AND state = 'running'$$,
    $$VALUES (NULL::integer, false, NULL::bigint)$$, 'queue_stats shows no rate limit and no window');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'free');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('free', 'w1', 10)), 1::bigint, 'a queue without a rate limit');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queue_starts WHERE queue IN ('rm', 'free')$$,
    'logs nothing, nor does one whose limit was removed');

-- Full keys far ahead: a claim of one reads past 100 of them (looks of 16,
-- 32, 64 and 128 jobs) to the keys with room behind, in claim order.
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('far', 1, '1 hour', true);
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', pg_catalog.jsonb_build_object('n', g), 'far', concurrency_key => 'full' || g))
  FROM generate_series(1, 100) AS g;
RESET ROLE;
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
SELECT 'far', 'full' || g, clock_timestamp() - interval '10 minutes' FROM generate_series(1, 100) AS g;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('far', 'w1', 5)$$,
    'behind 100 full keys and nothing else, a claim starts nothing');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(taskboard.enqueue('t', pg_catalog.jsonb_build_object('n', 100 + g), 'far',
                                          concurrency_key => 'room' || (g % 3)))
  FROM generate_series(1, 6) AS g;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT c.payload->>'n' FROM taskboard.claim('far', 'w1') AS c$$,
    $$VALUES ('101')$$, 'a claim of one takes the first job of a key with room behind them');
SELECT results_eq($$SELECT c.payload->>'n' FROM taskboard.claim('far', 'w1', 10) AS c$$,
    $$VALUES ('102'), ('103')$$,
    'a claim of ten takes the first job of each other key with room, in claim order, and nothing more');
SELECT is_empty($$SELECT * FROM taskboard.claim('far', 'w1', 10)$$,
    'then every key''s window is full: nothing starts');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
