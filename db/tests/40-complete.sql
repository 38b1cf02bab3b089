-- complete(job_id, token, result): the current token makes the job
-- succeeded with its result; repeating with the same token answers true
-- again and changes nothing; any other token gets false and changes nothing.

BEGIN;
SELECT plan(35);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-a') AS a_id \gset
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-s') AS s_id \gset
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-x') AS x_id \gset
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-c') AS c_id \gset
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-f') AS f_id \gset
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-r') AS r_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim(queue => 'complete-a', worker => 'worker-a') WHERE job_id = :a_id \gset
SELECT token AS s_stale FROM taskboard.claim(queue => 'complete-s', worker => 'worker-a') WHERE job_id = :s_id \gset
SELECT token AS x_token FROM taskboard.claim(queue => 'complete-x', worker => 'worker-a') WHERE job_id = :x_id \gset
SELECT token AS c_token FROM taskboard.claim(queue => 'complete-c', worker => 'worker-a') WHERE job_id = :c_id \gset
SELECT token AS f_token FROM taskboard.claim(queue => 'complete-f', worker => 'worker-a') WHERE job_id = :f_id \gset
SELECT token AS r_token FROM taskboard.claim(queue => 'complete-r', worker => 'worker-a') WHERE job_id = :r_id \gset
RESET ROLE;

-- Tokens that are not current for a running job.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :a_id, token => gen_random_uuid(), result => '{"sent": true}'),
          false, 'a random token cannot complete a running job');
SELECT is(taskboard.complete(job_id => :a_id, token => :'x_token', result => '{"sent": true}'),
          false, 'the token of another job cannot complete this one');
SELECT is(taskboard.complete(job_id => :unknown_id, token => :'a_token'),
          false, 'complete of an unknown job returns false');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a refused completion leaves the running job unchanged');

-- Bad input and grants.
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.complete(job_id => NULL, token => %L)$$, :'a_token'),
                 '22023', NULL, 'complete rejects a NULL job_id');
SELECT throws_ok(format($$SELECT taskboard.complete(job_id => %s, token => NULL)$$, :a_id),
                 '22023', NULL, 'complete rejects a NULL token');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.complete(job_id => %s, token => %L)$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not complete a job');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'rejected calls leave the running job unchanged');

-- The holder completes.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :a_id, token => :'a_token', result => '{"sent": true}'),
          true, 'the holder completes its job');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :a_id), 'succeeded',
          'a completed job is succeeded');
SELECT is((SELECT result FROM taskboard.jobs WHERE id = :a_id), '{"sent": true}'::jsonb,
          'a completed job keeps the holder''s result');
SELECT ok((SELECT finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
             FROM taskboard.jobs WHERE id = :a_id),
          'complete sets finished_at to the server clock');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT jsonb_build_object('state', state, 'result', result) FROM taskboard.get_job(job_id => :a_id)),
          '{"state": "succeeded", "result": {"sent": true}}'::jsonb,
          'the producer sees the job succeeded with its result');
RESET ROLE;

-- Repeating the completion.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :a_id, token => :'a_token', result => '{"sent": true}'),
          true, 'repeating the completion with the same token returns true again');
SELECT is(taskboard.complete(job_id => :a_id, token => :'a_token', result => '{"sent": "twice"}'),
          true, 'a repeat with a different result still returns true');
SELECT is(taskboard.complete(job_id => :a_id, token => gen_random_uuid()),
          false, 'a random token cannot complete a succeeded job');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'repeated completions change nothing: first result and finished_at stay');

-- A stale token after a reclaim.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'complete-s', worker => 'worker-b') WHERE job_id = :s_id \gset
RESET ROLE;
SELECT to_jsonb(j) AS s_row FROM taskboard.jobs AS j WHERE id = :s_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :s_id, token => :'s_stale', result => '{"by": "A"}'),
          false, 'a stale token cannot complete the job after another worker reclaimed it');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :s_id), :'s_row'::jsonb,
          'a stale completion leaves the job running under the new holder');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :s_id, token => :'s_token', result => '{"by": "B"}'),
          true, 'the new holder completes the reclaimed job');
RESET ROLE;
SELECT to_jsonb(j) AS s_row FROM taskboard.jobs AS j WHERE id = :s_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :s_id, token => :'s_stale', result => '{"by": "A"}'),
          false, 'a stale token cannot complete the job after the new holder succeeded');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :s_id), :'s_row'::jsonb,
          'the job stays succeeded with the new holder''s result');
SELECT is((SELECT result FROM taskboard.jobs WHERE id = :s_id), '{"by": "B"}'::jsonb,
          'the result is the new holder''s');

-- A current token whose lease expired, nobody having reclaimed the job.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :x_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :x_id, token => :'x_token'),
          true, 'a current token completes its job even after the lease expired, when nobody reclaimed it');
RESET ROLE;
SELECT is((SELECT jsonb_build_object('state', state, 'result', result, 'finished', finished_at IS NOT NULL)
             FROM taskboard.jobs WHERE id = :x_id),
          '{"state": "succeeded", "result": null, "finished": true}'::jsonb,
          'without a result the job succeeds with a NULL result');
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim(queue => 'complete-x', worker => 'worker-b')),
          0::bigint, 'a job completed after its lease expired is not claimed again');
RESET ROLE;

-- Cancel, fail and release end the token.
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job c');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :f_id, token => :'f_token', error => 'smtp timeout', retry_in => '1 hour'),
          'queued', 'the holder fails job f with attempts left');
SELECT ok(taskboard.release(job_id => :r_id, token => :'r_token', delay => '1 hour'),
          'the holder releases job r');
RESET ROLE;
SELECT jsonb_object_agg(id, to_jsonb(j)) AS cfr_rows
  FROM taskboard.jobs AS j WHERE id IN (:c_id, :f_id, :r_id) \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :c_id, token => :'c_token', result => '{}'),
          false, 'the holder cannot complete a job after it was cancelled');
SELECT is(taskboard.complete(job_id => :f_id, token => :'f_token', result => '{}'),
          false, 'a token cannot complete the job after its own fail');
SELECT is(taskboard.complete(job_id => :r_id, token => :'r_token', result => '{}'),
          false, 'a token cannot complete the job after its own release');
RESET ROLE;
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:c_id, :f_id, :r_id)),
          :'cfr_rows'::jsonb,
          'completions refused after cancel, fail and release change nothing');
SELECT is((SELECT jsonb_object_agg(id, state) FROM taskboard.jobs WHERE id IN (:c_id, :f_id, :r_id)),
          jsonb_build_object(:'c_id', 'cancelled', :'f_id', 'queued', :'r_id', 'queued'),
          'the cancelled job stays cancelled and the failed and released jobs stay queued');

-- An administrator holds the worker's rights.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email', queue => 'complete-adm') AS m_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT token AS m_token FROM taskboard.claim(queue => 'complete-adm', worker => 'admin-shell') WHERE job_id = :m_id \gset
SELECT is(taskboard.complete(job_id => :m_id, token => :'m_token'),
          true, 'an administrator can complete with the current token');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
