-- The story from DESIGN.md that Taskboard must get right.
--
-- Worker A claims Maya's email job (lease 60 s) and stalls. The lease
-- expires. Worker B reclaims it and sends the email. A resumes and tries to
-- complete: its token is stale, so the completion matches nothing and
-- returns false. Nothing A does after that can change the job.
-- (What the database cannot fence is SMTP: A may already have sent the
-- email. The idempotency key is the same for both attempts, for APIs that
-- honour one.)

BEGIN;
SELECT plan(30);

-- The application enqueues Maya's email.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email',
                         payload => '{"to": "maya@example.com", "template": "welcome"}',
                         queue => 'story-email') AS job_id \gset
RESET ROLE;

-- Worker A claims it with a 60-second lease.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS a_job, token AS claim_a, attempt AS a_attempt,
       lease_expires_at AS a_deadline, idempotency_key AS a_key, payload AS a_payload
  FROM taskboard.claim(queue => 'story-email', worker => 'worker-a', lease => '60 seconds') \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is(:a_job::bigint, :job_id::bigint, 'worker A claims Maya''s email job');
SELECT is(:a_attempt, 1, 'worker A runs attempt 1');
SELECT is(:'a_payload'::jsonb->>'to', 'maya@example.com', 'worker A gets Maya''s payload');
SELECT ok(:'a_deadline'::timestamptz BETWEEN :'t0'::timestamptz + interval '60 seconds'
                                         AND :'t1'::timestamptz + interval '60 seconds',
          'worker A''s lease runs 60 seconds from the server clock');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_a'), 'held',
          'worker A holds the job');
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'story-email', worker => 'worker-b')$$,
                'while A''s lease is live, worker B gets nothing');
RESET ROLE;

-- A stalls; its lease expires.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :job_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_a'), 'expired',
          'after the deadline, before any reclaim, A is told its lease expired');
RESET ROLE;

-- Worker B reclaims it.
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS b_job, token AS claim_b, attempt AS b_attempt, idempotency_key AS b_key
  FROM taskboard.claim(queue => 'story-email', worker => 'worker-b', lease => '60 seconds') \gset
RESET ROLE;
SELECT is(:b_job::bigint, :job_id::bigint, 'worker B reclaims the expired job');
SELECT isnt(:'claim_b'::uuid, :'claim_a'::uuid, 'worker B holds a different token');
SELECT is(:b_attempt, 2, 'worker B runs attempt 2');
SELECT is(:'b_key'::uuid, :'a_key'::uuid, 'both attempts present the same idempotency key');

-- A resumes while B holds the job: every write A tries is refused.
SELECT to_jsonb(j) AS b_running FROM taskboard.jobs AS j WHERE id = :job_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :job_id, token => :'claim_a', result => '{"sent_by": "A"}'),
          false, 'A''s completion presents claim-a, matches nothing and returns false');
SELECT is(taskboard.renew(job_id => :job_id, token => :'claim_a'), NULL,
          'A cannot renew while B holds the job');
SELECT is(taskboard.fail(job_id => :job_id, token => :'claim_a', error => 'smtp timeout'), NULL,
          'A cannot fail the job while B holds it');
SELECT is(taskboard.release(job_id => :job_id, token => :'claim_a'), false,
          'A cannot release the job while B holds it');
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_a'), 'lost',
          'A is told it lost the job');
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_b'), 'held',
          'B still holds the job');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :job_id), :'b_running'::jsonb,
          'A''s refused writes leave B''s running job exactly as it was');

-- B sends the email and completes.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :job_id, token => :'claim_b', result => '{"sent_by": "B"}'),
          true, 'B''s completion returns true');
RESET ROLE;

-- A tries everything again: nothing changes the job any more.
SELECT to_jsonb(j) AS b_done FROM taskboard.jobs AS j WHERE id = :job_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(job_id => :job_id, token => :'claim_a', result => '{"sent_by": "A"}'),
          false, 'A still cannot complete after B succeeded');
SELECT is(taskboard.renew(job_id => :job_id, token => :'claim_a'), NULL,
          'A''s renew after B succeeded is NULL');
SELECT is(taskboard.fail(job_id => :job_id, token => :'claim_a', error => 'smtp timeout'), NULL,
          'A''s fail after B succeeded is NULL');
SELECT is(taskboard.release(job_id => :job_id, token => :'claim_a'), false,
          'A''s release after B succeeded is false');
SELECT is((SELECT count(*) FROM taskboard.renew_many(job_ids => ARRAY[:job_id]::bigint[],
                                                     tokens  => ARRAY[:'claim_a']::uuid[])
            WHERE lease_expires_at IS NOT NULL),
          0::bigint, 'A''s batched renew is refused');
SELECT is((SELECT count(*) FROM taskboard.complete_many(job_ids => ARRAY[:job_id]::bigint[],
                                                        tokens  => ARRAY[:'claim_a']::uuid[],
                                                        results => ARRAY['{"sent_by": "A"}']::jsonb[])
            WHERE completed),
          0::bigint, 'A''s batched completion is refused');
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_a'), 'lost',
          'lease_state tells A lost');
SELECT is(taskboard.lease_state(job_id => :job_id, token => :'claim_b'), 'completed',
          'lease_state tells B completed');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :job_id), :'b_done'::jsonb,
          'nothing A did after B''s success changed the job');

-- What the producer sees.
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT jsonb_build_object('state', state, 'attempt', attempt, 'result', result, 'errors', errors)
             FROM taskboard.get_job(job_id => :job_id)),
          '{"state": "succeeded", "attempt": 2, "result": {"sent_by": "B"}, "errors": []}'::jsonb,
          'Maya''s job ends succeeded on attempt 2 with B''s result and no error from A');
SELECT isnt((SELECT finished_at FROM taskboard.get_job(job_id => :job_id)), NULL,
            'Maya''s job has finished_at');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
