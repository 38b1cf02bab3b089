-- retry(job_id): an administrator queues a dead or cancelled job again,
-- attempts reset, error history kept: runnable now, or, for a job cancelled
-- under a lease that has not run out, when that lease ends (its holder may
-- still believe it holds the job). false for any other state, and when the
-- job's dedupe_key is now held by another unfinished job of its queue and
-- task; nothing changes then. Administrators only.
-- (The NOTIFY it sends is only delivered at commit: pytest covers it.)

BEGIN;
SELECT plan(40);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

-- A dead job: one attempt, failed.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-d', max_attempts => 1) AS d_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS d_token FROM taskboard.claim(queue => 'retry-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'pdf renderer crashed'), 'dead',
          'job d dies on its only attempt');
RESET ROLE;
SELECT errors AS d_errors FROM taskboard.jobs WHERE id = :d_id \gset

-- Only administrators may retry.
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.retry(job_id => %s)$$, :d_id),
                 '42501', NULL, 'a producer may not retry a job');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.retry(job_id => %s)$$, :d_id),
                 '42501', NULL, 'a worker may not retry a job');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.retry(job_id => NULL)$$,
                 '22023', NULL, 'retry rejects a NULL job_id');
SELECT is(taskboard.retry(job_id => :unknown_id), false, 'retry of an unknown job returns false');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :d_id), 'dead',
          'refused retries leave the job dead');

-- dead -> queued
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(job_id => :d_id), true, 'an administrator retries a dead job');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is((SELECT jsonb_build_object('state', state, 'attempt', attempt, 'finished_at', finished_at)
             FROM taskboard.jobs WHERE id = :d_id),
          '{"state": "queued", "attempt": 0, "finished_at": null}'::jsonb,
          'a retried job is queued with its attempts reset and no finished_at');
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz FROM taskboard.jobs WHERE id = :d_id),
          'a retried job is runnable from the server clock''s now');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT errors FROM taskboard.get_job(job_id => :d_id)), :'d_errors'::jsonb,
          'a retried job keeps its error history');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS d_token2, attempt AS d_attempt
  FROM taskboard.claim(queue => 'retry-d', worker => 'worker-b') WHERE job_id = :d_id \gset
SELECT is(taskboard.complete(job_id => :d_id, token => :'d_token'), false,
          'the token of the attempt before the retry cannot complete the job');
SELECT is(taskboard.complete(job_id => :d_id, token => :'d_token2'), true,
          'the retried job runs again and completes');
RESET ROLE;
SELECT is(:d_attempt, 1, 'the retried single-attempt job is claimed again as attempt 1');

-- Cancelled while queued, while running, and while running on a lease that
-- had already run out.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-c') AS c_id \gset
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-x') AS x_id \gset
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-e') AS e_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS x_token FROM taskboard.claim(queue => 'retry-x', worker => 'worker-a', lease => '5 minutes')
 WHERE job_id = :x_id \gset
SELECT token AS e_token FROM taskboard.claim(queue => 'retry-e', worker => 'worker-a') WHERE job_id = :e_id \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :e_id;
SELECT lease_expires_at AS x_deadline FROM taskboard.jobs WHERE id = :x_id \gset
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels queued job c');
SELECT ok(taskboard.cancel(job_id => :x_id), 'an administrator cancels running job x');
SELECT ok(taskboard.cancel(job_id => :e_id), 'an administrator cancels running job e, its lease run out');
SELECT is(taskboard.retry(job_id => :c_id), true, 'an administrator retries a job cancelled while queued');
SELECT is(taskboard.retry(job_id => :x_id), true, 'an administrator retries a job cancelled while running');
SELECT is(taskboard.retry(job_id => :e_id), true, 'an administrator retries a job cancelled after its lease ran out');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is((SELECT count(*) FROM taskboard.jobs
            WHERE id IN (:c_id, :x_id, :e_id) AND state = 'queued' AND attempt = 0 AND finished_at IS NULL),
          3::bigint, 'the cancelled jobs are queued again with attempts reset');
SELECT is((SELECT run_at FROM taskboard.jobs WHERE id = :x_id), :'x_deadline'::timestamptz,
          'a job cancelled under a live lease is runnable when that lease ends, not before');
SELECT ok((SELECT bool_and(run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz)
             FROM taskboard.jobs WHERE id IN (:c_id, :e_id)),
          'a job cancelled while queued, or after its lease ran out, is runnable now');
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'retry-x', worker => 'worker-b')$$,
                'no second worker can claim the job while the lease cancelled under its holder lasts');
SELECT is((SELECT job_id FROM taskboard.claim(queue => 'retry-e', worker => 'worker-b')), :e_id::bigint,
          'a job whose lease had run out before the cancel is claimed again at once');
SELECT is(taskboard.lease_state(job_id => :x_id, token => :'x_token'), 'lost',
          'the holder from before the cancel is still told lost after the retry');
SELECT is(taskboard.complete(job_id => :x_id, token => :'x_token'), false,
          'the holder from before the cancel cannot complete the retried job');
SELECT is(taskboard.renew(job_id => :x_id, token => :'x_token'), NULL,
          'nor renew it: its lease is not extended while the retried job waits');
RESET ROLE;

-- Other states: queued, running, succeeded.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-q') AS q_id \gset
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-r') AS r_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS r_token FROM taskboard.claim(queue => 'retry-r', worker => 'worker-a') WHERE job_id = :r_id \gset
RESET ROLE;
SELECT jsonb_object_agg(id, to_jsonb(j)) AS other_rows
  FROM taskboard.jobs AS j WHERE id IN (:q_id, :r_id, :d_id) \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(job_id => :q_id), false, 'retry of a queued job returns false');
SELECT is(taskboard.retry(job_id => :r_id), false, 'retry of a running job returns false');
SELECT is(taskboard.retry(job_id => :d_id), false, 'retry of a succeeded job returns false');
RESET ROLE;
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:q_id, :r_id, :d_id)),
          :'other_rows'::jsonb,
          'a refused retry leaves queued, running and succeeded jobs unchanged');

-- The dedupe key was taken by a newer job.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-k', dedupe_key => 'invoice-42') AS k1_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :k1_id), 'an administrator cancels job k1, freeing its dedupe key');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-k', dedupe_key => 'invoice-42') AS k2_id \gset
RESET ROLE;
SELECT isnt(:k2_id::bigint, :k1_id::bigint, 'a new job k2 takes the freed dedupe key');

SELECT jsonb_object_agg(id, to_jsonb(j)) AS k_rows FROM taskboard.jobs AS j WHERE id IN (:k1_id, :k2_id) \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(job_id => :k1_id), false,
          'retry returns false when another unfinished job of the queue holds the job''s dedupe key');
RESET ROLE;
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:k1_id, :k2_id)),
          :'k_rows'::jsonb,
          'that refused retry leaves both jobs unchanged');

-- Once k2 is finished, and the key held only in another queue, k1 can be retried.
SET LOCAL ROLE taskboard_worker;
SELECT token AS k2_token FROM taskboard.claim(queue => 'retry-k', worker => 'worker-a') WHERE job_id = :k2_id \gset
SELECT ok(taskboard.complete(job_id => :k2_id, token => :'k2_token'), 'job k2 completes');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'retry-k-other', dedupe_key => 'invoice-42') AS k3_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(job_id => :k1_id), true,
          'retry succeeds once the key is held by no unfinished job of the same queue');
RESET ROLE;

-- Keys are scoped to (queue, task, key): an unfinished job of another task
-- holding the key does not stand in the way.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge', queue => 'retry-scope', dedupe_key => 'order-9') AS s1_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :s1_id), 'an administrator cancels charge s1');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'refund', queue => 'retry-scope', dedupe_key => 'order-9') AS s2_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(job_id => :s1_id), true,
          'retry succeeds while only a job of another task holds the key on the queue');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'retry-scope' AND state = 'queued'), 2::bigint,
          'the charge and the refund with the same key are both queued');

SELECT * FROM finish();
ROLLBACK;
