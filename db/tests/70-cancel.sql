-- cancel(job_id): an administrator stops a queued or running job; it
-- becomes cancelled with finished_at, and the holder's later writes get
-- NULL/false. false for a finished or unknown job. Administrators only.

BEGIN;
SELECT plan(26);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'newsletter', queue => 'cancel-q') AS q_id \gset
SELECT taskboard.enqueue(task => 'newsletter', queue => 'cancel-r') AS r_id \gset
RESET ROLE;

-- Only administrators may cancel.
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.cancel(job_id => %s)$$, :q_id),
                 '42501', NULL, 'a producer may not cancel a job');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.cancel(job_id => %s)$$, :q_id),
                 '42501', NULL, 'a worker may not cancel a job');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.cancel(job_id => NULL)$$,
                 '22023', NULL, 'cancel rejects a NULL job_id');
SELECT is(taskboard.cancel(job_id => :unknown_id), false, 'cancel of an unknown job returns false');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :q_id), 'queued',
          'refused cancels leave the job queued');

-- A queued job.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :q_id), true, 'an administrator cancels a queued job');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT state = 'cancelled' AND finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
             FROM taskboard.jobs WHERE id = :q_id),
          'a cancelled job is cancelled with finished_at from the server clock');
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'cancel-q', worker => 'worker-a')$$,
                'a cancelled queued job is never claimed');
RESET ROLE;

-- A running job.
SET LOCAL ROLE taskboard_worker;
SELECT token AS r_token FROM taskboard.claim(queue => 'cancel-r', worker => 'worker-a') WHERE job_id = :r_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :r_id), true, 'an administrator cancels a running job');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT state = 'cancelled' AND finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
             FROM taskboard.jobs WHERE id = :r_id),
          'a cancelled running job is cancelled with finished_at');

SELECT to_jsonb(j) AS r_row FROM taskboard.jobs AS j WHERE id = :r_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :r_id, token => :'r_token'), NULL,
          'the holder of a cancelled job cannot renew');
SELECT is(taskboard.complete(job_id => :r_id, token => :'r_token', result => '{}'), false,
          'the holder of a cancelled job cannot complete it');
SELECT is(taskboard.fail(job_id => :r_id, token => :'r_token', error => 'interrupted'), NULL,
          'the holder of a cancelled job cannot fail it');
SELECT is(taskboard.release(job_id => :r_id, token => :'r_token'), false,
          'the holder of a cancelled job cannot release it');
SELECT is(taskboard.lease_state(job_id => :r_id, token => :'r_token'), 'lost',
          'the holder of a cancelled job is told lost');
SELECT is((SELECT count(*)
             FROM taskboard.renew_many(job_ids => ARRAY[:r_id]::bigint[], tokens => ARRAY[:'r_token']::uuid[])
            WHERE lease_expires_at IS NOT NULL),
          0::bigint, 'the holder of a cancelled job cannot renew it in a batch');
SELECT is((SELECT count(*)
             FROM taskboard.complete_many(job_ids => ARRAY[:r_id]::bigint[], tokens => ARRAY[:'r_token']::uuid[])
            WHERE completed),
          0::bigint, 'the holder of a cancelled job cannot complete it in a batch');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :r_id), :'r_row'::jsonb,
          'the holder''s writes after the cancel change nothing');

-- Its old deadline passing does not make it claimable.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :r_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'cancel-r', worker => 'worker-b')$$,
                'a cancelled running job is never reclaimed, even past its old deadline');
RESET ROLE;

-- Finished jobs.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'newsletter', queue => 'cancel-s') AS s_id \gset
SELECT taskboard.enqueue(task => 'newsletter', queue => 'cancel-d', max_attempts => 1) AS d_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'cancel-s', worker => 'worker-a') WHERE job_id = :s_id \gset
SELECT token AS d_token FROM taskboard.claim(queue => 'cancel-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT ok(taskboard.complete(job_id => :s_id, token => :'s_token', result => '{"sent": 1200}'),
          'the holder completes job s');
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'bounced'), 'dead',
          'the holder fails job d on its only attempt');
RESET ROLE;

SELECT jsonb_object_agg(id, to_jsonb(j)) AS finished_rows
  FROM taskboard.jobs AS j WHERE id IN (:s_id, :d_id, :q_id) \gset
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :s_id), false, 'cancel of a succeeded job returns false');
SELECT is(taskboard.cancel(job_id => :d_id), false, 'cancel of a dead job returns false');
SELECT is(taskboard.cancel(job_id => :q_id), false, 'cancel of a cancelled job returns false');
RESET ROLE;
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:s_id, :d_id, :q_id)),
          :'finished_rows'::jsonb,
          'cancel leaves finished jobs as they were, finished_at included');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :s_id, token => :'s_token'), 'completed',
          'the holder of a succeeded job is still told completed after a refused cancel');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
