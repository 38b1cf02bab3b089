-- release(job_id, token, delay): the holder hands the job back (shutdown).
-- It is queued again at clock + delay and this claim is not counted as an
-- attempt. false when the token is not current, and nothing changes.
-- (The NOTIFY sent on a release without delay is only delivered at commit:
-- pytest covers it.)

BEGIN;
SELECT plan(32);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'transcode', queue => 'release-a') AS a_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token, attempt AS a_attempt
  FROM taskboard.claim(queue => 'release-a', worker => 'worker-a') WHERE job_id = :a_id \gset
RESET ROLE;
SELECT is(:a_attempt, 1, 'the first claim is attempt 1');

-- Bad input and grants, while worker-a holds job a.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.release(job_id => %s, token => %L, delay => '-1 second')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'release rejects a negative delay, even from the holder');
SELECT throws_ok(format($$SELECT taskboard.release(job_id => %s, token => %L, delay => NULL)$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'release rejects a NULL delay');
SELECT throws_ok(format($$SELECT taskboard.release(job_id => NULL, token => %L)$$, :'a_token'),
                 '22023', NULL, 'release rejects a NULL job_id');
SELECT throws_ok(format($$SELECT taskboard.release(job_id => %s, token => NULL)$$, :a_id),
                 '22023', NULL, 'release rejects a NULL token');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.release(job_id => %s, token => %L)$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not release a job');
RESET ROLE;

-- Tokens that are not current.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :a_id, token => gen_random_uuid()),
          false, 'a random token cannot release a running job');
SELECT is(taskboard.release(job_id => :unknown_id, token => :'a_token'),
          false, 'release of an unknown job returns false');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'rejected and refused releases leave the running job unchanged');

-- The holder releases with a delay.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :a_id, token => :'a_token', delay => '30 seconds'),
          true, 'the holder releases its job');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz + interval '30 seconds'
                             AND :'t1'::timestamptz + interval '30 seconds'
             FROM taskboard.jobs WHERE id = :a_id),
          'a released job runs again at the server clock plus the delay');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT jsonb_build_object('state', state, 'attempt', attempt, 'errors', errors,
                                     'finished', finished_at IS NOT NULL)
             FROM taskboard.get_job(job_id => :a_id)),
          '{"state": "queued", "attempt": 0, "errors": [], "finished": false}'::jsonb,
          'a released job is queued, its attempt handed back and no error recorded');
RESET ROLE;

SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :a_id, token => :'a_token'),
          false, 'a token cannot release the job twice');
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'release-a', worker => 'worker-b')$$,
                'a job released with a delay is not claimed before the delay ends');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a second release with a spent token changes nothing');

-- The delay passes (run_at moved as the owner): the next claim is attempt 1 again.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :a_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token, attempt AS a_attempt
  FROM taskboard.claim(queue => 'release-a', worker => 'worker-b') WHERE job_id = :a_id \gset
RESET ROLE;
SELECT is(:a_attempt, 1, 'the claim after a release is attempt 1 again: the release was not counted');

-- Release without a delay: runnable at once.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :a_id, token => :'a_token'),
          true, 'the holder releases its job without a delay');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
             FROM taskboard.jobs WHERE id = :a_id),
          'without a delay the job is queued at the server clock');
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token, attempt AS a_attempt
  FROM taskboard.claim(queue => 'release-a', worker => 'worker-c') WHERE job_id = :a_id \gset
RESET ROLE;
SELECT is(:a_attempt, 1, 'a job released without delay is claimed at once, still as attempt 1');

-- A job on its last attempt can be released and claimed again.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'transcode', queue => 'release-l', max_attempts => 1) AS l_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS l_token FROM taskboard.claim(queue => 'release-l', worker => 'worker-a') WHERE job_id = :l_id \gset
SELECT is(taskboard.release(job_id => :l_id, token => :'l_token'),
          true, 'the holder releases a job on its only attempt');
SELECT token AS l_token, attempt AS l_attempt
  FROM taskboard.claim(queue => 'release-l', worker => 'worker-b') WHERE job_id = :l_id \gset
SELECT is(taskboard.complete(job_id => :l_id, token => :'l_token'),
          true, 'the released single-attempt job runs again and completes');
RESET ROLE;
SELECT is(:l_attempt, 1, 'the second claim of a single-attempt job is still attempt 1 of 1');

-- A stale token after a reclaim.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'transcode', queue => 'release-s') AS s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_stale FROM taskboard.claim(queue => 'release-s', worker => 'worker-a') WHERE job_id = :s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'release-s', worker => 'worker-b') WHERE job_id = :s_id \gset
RESET ROLE;
SELECT to_jsonb(j) AS s_row FROM taskboard.jobs AS j WHERE id = :s_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :s_id, token => :'s_stale'),
          false, 'a stale token cannot release the job after another worker reclaimed it');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :s_id), :'s_row'::jsonb,
          'a stale release leaves the job running under the new holder, attempt 2 counted');
SELECT is((SELECT attempt FROM taskboard.jobs WHERE id = :s_id), 2,
          'the reclaim is attempt 2');

-- A current token whose lease expired, nobody having reclaimed the job.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :s_id, token => :'s_token', delay => '1 hour'),
          true, 'a current token can still release its job after the lease expired, when nobody reclaimed it');
RESET ROLE;
SELECT is((SELECT attempt FROM taskboard.jobs WHERE id = :s_id), 1,
          'that release hands back attempt 2 and keeps attempt 1');

-- Cancelled while running.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'transcode', queue => 'release-c') AS c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS c_token FROM taskboard.claim(queue => 'release-c', worker => 'worker-a') WHERE job_id = :c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job c');
RESET ROLE;
SELECT to_jsonb(j) AS c_row FROM taskboard.jobs AS j WHERE id = :c_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.release(job_id => :c_id, token => :'c_token'),
          false, 'the holder cannot release a job after it was cancelled');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :c_id), :'c_row'::jsonb,
          'a release after cancel leaves the job cancelled');

-- delay bounded by the time it gives ----------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT taskboard.release(1, gen_random_uuid(), '12000 mon -360000 days 11 hours')$$,
    'delay must be at most 12 hours, got %', 'a worker cannot release with a delay of months less days');
SELECT throws_like($$SELECT taskboard.release(1, gen_random_uuid(), '-300000 years')$$,
    'delay must not be NULL or negative, got %', 'a huge negative delay is refused with 22023');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
