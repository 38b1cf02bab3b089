-- claim under a key limit, more rules: a queue limit and a key limit
-- together (the smaller room wins); jobs without a key are not limited by
-- it; a key with many queued jobs ahead of others starts one (at limit 1)
-- and the same claim goes round again for the others' jobs, the full key
-- skipped; a job due later is not started; a spent expired job of a key
-- frees its place in the claim that buries it.

BEGIN;
SELECT plan(8);

SET LOCAL ROLE taskboard_producer;
SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[6]), 'kq',
    concurrency_keys => ARRAY['a', 'a', 'b', 'b', NULL, NULL]);
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_key_limit('kq', 1);
SELECT taskboard.set_queue_limit('kq', 3);
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('kq', 'w1', 10)), 3::bigint,
    'under a queue limit of 3 and a key limit of 1, a claim of 10 starts 3');
SELECT is((SELECT count(*) FROM taskboard.claim('kq', 'w1', 10)), 0::bigint,
    'the queue limit is full');
RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.jobs WHERE queue = 'kq' AND state = 'running'
            GROUP BY concurrency_key ORDER BY 1 DESC LIMIT 1) <= 1, true,
    'no key has two running jobs');
SELECT array_agg(id ORDER BY id) AS unkeyed FROM taskboard.jobs
 WHERE queue = 'kq' AND state = 'queued' AND concurrency_key IS NULL \gset
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit('kq', NULL);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT array_agg(job_id ORDER BY job_id) FROM taskboard.claim('kq', 'w1', 10)), :'unkeyed'::bigint[],
    'without the queue limit, the keyed jobs left wait for their keys; only unkeyed ones start');
RESET ROLE;

-- One key with many jobs ahead of another key's job.
SET LOCAL ROLE taskboard_producer;
SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[50]), 'hot',
    priority => 5, concurrency_keys => array_fill('busy'::text, ARRAY[50]));
SELECT taskboard.enqueue('t', '{}', 'hot', concurrency_key => 'quiet') AS quiet \gset
SELECT taskboard.enqueue('t', '{}', 'hot', concurrency_key => 'later',
    run_at => clock_timestamp() + interval '1 hour') AS later \gset
RESET ROLE;
SELECT min(id) AS busy1 FROM taskboard.jobs WHERE queue = 'hot' AND concurrency_key = 'busy' \gset
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_key_limit('hot', 1);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('hot', 'w1', 5)$$,
    format($$VALUES (%s::bigint), (%s::bigint)$$, :busy1, :quiet),
    'one claim starts the first job of the key ahead and, going round again past the now full key, the other key''s job');
SELECT is_empty($$SELECT job_id FROM taskboard.claim('hot', 'w2', 5)$$,
    'fewer rows than the batch meant nothing else could start: the next claim takes nothing; the job due later waits');
RESET ROLE;

-- A spent expired job of a key is buried, and the same claim starts the key's next job.
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second', max_attempts = attempt
 WHERE queue = 'hot' AND concurrency_key = 'busy' AND state = 'running';
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('hot', 'w3', 5)), 1::bigint,
    'the claim that buries the spent job goes round again and starts the key''s next job');
SELECT is((SELECT count(*) FROM taskboard.claim('hot', 'w3', 5)), 0::bigint,
    'and the key is full again');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
