-- lease_state(job_id, token): read-only answer for the holder.
--   held: current token, live lease; expired: current token, deadline past,
--   not reclaimed; completed: succeeded with this token; lost: anything else.

BEGIN;
SELECT plan(25);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-a') AS a_id \gset
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-f') AS f_id \gset
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-d', max_attempts => 1) AS d_id \gset
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-r') AS r_id \gset
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-c') AS c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim(queue => 'lease_state-a', worker => 'worker-a') WHERE job_id = :a_id \gset
SELECT token AS f_token FROM taskboard.claim(queue => 'lease_state-f', worker => 'worker-a') WHERE job_id = :f_id \gset
SELECT token AS d_token FROM taskboard.claim(queue => 'lease_state-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT token AS r_token FROM taskboard.claim(queue => 'lease_state-r', worker => 'worker-a') WHERE job_id = :r_id \gset
SELECT token AS c_token FROM taskboard.claim(queue => 'lease_state-c', worker => 'worker-a') WHERE job_id = :c_id \gset
RESET ROLE;

-- held
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :a_id, token => :'a_token'), 'held',
          'the holder of a live lease is told held');
SELECT is(taskboard.lease_state(job_id => :a_id, token => gen_random_uuid()), 'lost',
          'a random token on a running job is told lost');
SELECT is(taskboard.lease_state(job_id => :a_id, token => :'f_token'), 'lost',
          'the token of another job is told lost');
SELECT is(taskboard.lease_state(job_id => :unknown_id, token => :'a_token'), 'lost',
          'a token on an unknown job is told lost');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'asking about a live lease changes nothing (the deadline is not extended)');

-- Bad input and grants.
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.lease_state(job_id => NULL, token => %L)$$, :'a_token'),
                 '22023', NULL, 'lease_state rejects a NULL job_id');
SELECT throws_ok(format($$SELECT taskboard.lease_state(job_id => %s, token => NULL)$$, :a_id),
                 '22023', NULL, 'lease_state rejects a NULL token');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.lease_state(job_id => %s, token => %L)$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not ask for lease state');
RESET ROLE;

-- expired, not reclaimed
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :a_id;
RESET ROLE;
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :a_id, token => :'a_token'), 'expired',
          'the holder whose deadline passed, with nobody reclaiming, is told expired');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'asking about an expired lease changes nothing (the job stays running and expired)');

-- completed, then the same token is still told completed
SET LOCAL ROLE taskboard_worker;
SELECT ok(taskboard.complete(job_id => :a_id, token => :'a_token', result => '{"rows": 3}'),
          'the holder of an expired but current token completes the job');
SELECT is(taskboard.lease_state(job_id => :a_id, token => :'a_token'), 'completed',
          'the token that completed the job is told completed');
SELECT is(taskboard.lease_state(job_id => :a_id, token => gen_random_uuid()), 'lost',
          'a random token on a succeeded job is told lost');
RESET ROLE;

-- lost after a reclaim
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'export', queue => 'lease_state-s') AS s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_stale FROM taskboard.claim(queue => 'lease_state-s', worker => 'worker-a') WHERE job_id = :s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'lease_state-s', worker => 'worker-b') WHERE job_id = :s_id \gset
SELECT is(taskboard.lease_state(job_id => :s_id, token => :'s_stale'), 'lost',
          'the old holder is told lost after another worker reclaimed the job');
SELECT is(taskboard.lease_state(job_id => :s_id, token => :'s_token'), 'held',
          'the new holder is told held');
SELECT ok(taskboard.complete(job_id => :s_id, token => :'s_token'), 'the new holder completes the job');
SELECT is(taskboard.lease_state(job_id => :s_id, token => :'s_stale'), 'lost',
          'the old holder is still told lost once the new holder completed the job');
RESET ROLE;

-- lost after fail (queued again, or dead), release and cancel
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :f_id, token => :'f_token', error => 'disk full', retry_in => '1 hour'),
          'queued', 'the holder fails job f with attempts left');
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'disk full'),
          'dead', 'the holder fails job d on its last attempt');
SELECT ok(taskboard.release(job_id => :r_id, token => :'r_token', delay => '1 hour'),
          'the holder releases job r');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job c');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :f_id, token => :'f_token'), 'lost',
          'a token is told lost after its own fail queued the job again');
SELECT is(taskboard.lease_state(job_id => :d_id, token => :'d_token'), 'lost',
          'a token is told lost after its own fail made the job dead');
SELECT is(taskboard.lease_state(job_id => :r_id, token => :'r_token'), 'lost',
          'a token is told lost after its own release');
SELECT is(taskboard.lease_state(job_id => :c_id, token => :'c_token'), 'lost',
          'the holder is told lost after its job was cancelled');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
