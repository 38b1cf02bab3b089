-- renew(job_id, token, lease): the holder extends a live lease to
-- clock + lease; a token that is not current, or a lease that already
-- expired, gets NULL and changes nothing.
--
-- Every call is made as the role that makes it in production; the table is
-- read as the session user and written only as taskboard_owner, to move a
-- deadline into the past.

BEGIN;
SELECT plan(36);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

-- Worker A claims job A.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-a') AS a_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token
  FROM taskboard.claim(queue => 'renew-a', worker => 'worker-a', lease => '60 seconds')
 WHERE job_id = :a_id \gset
RESET ROLE;

-- The holder renews a live lease.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.renew(job_id => :a_id, token => :'a_token', lease => '5 minutes') AS renewed \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT ok(:'renewed'::timestamptz BETWEEN :'t0'::timestamptz + interval '5 minutes'
                                      AND :'t1'::timestamptz + interval '5 minutes',
          'the holder''s renew returns the server clock plus the requested lease');
SELECT is((SELECT lease_expires_at FROM taskboard.jobs WHERE id = :a_id),
          :'renewed'::timestamptz,
          'renew stores the deadline it returns');
SELECT is((SELECT jsonb_build_object('state', state, 'attempt', attempt,
                                     'token', lease_token, 'claimed_by', claimed_by)
             FROM taskboard.jobs WHERE id = :a_id),
          jsonb_build_object('state', 'running', 'attempt', 1,
                             'token', :'a_token'::uuid, 'claimed_by', 'worker-a'),
          'renew keeps the job running with the same token, attempt and worker');

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.renew(job_id => :a_id, token => :'a_token') AS renewed \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok(:'renewed'::timestamptz BETWEEN :'t0'::timestamptz + interval '60 seconds'
                                      AND :'t1'::timestamptz + interval '60 seconds',
          'renew without a lease extends the deadline by the default 60 seconds');

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.renew(job_id => :a_id, token => :'a_token', lease => '2 seconds') AS renewed \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok(:'renewed'::timestamptz BETWEEN :'t0'::timestamptz + interval '2 seconds'
                                      AND :'t1'::timestamptz + interval '2 seconds',
          'renew sets the deadline to clock + lease even when that is earlier than the current one');

-- Tokens that were never issued for this job.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :a_id, token => gen_random_uuid()),
          NULL::timestamptz,
          'a random token cannot renew a live lease');
SELECT is(taskboard.renew(job_id => :unknown_id, token => :'a_token'),
          NULL::timestamptz,
          'renew of an unknown job returns NULL');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a refused renew changes nothing');

-- Bad input, from the role that would send it.
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => NULL, token => %L)$$, :'a_token'),
                 '22023', NULL, 'renew rejects a NULL job_id');
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => %s, token => NULL)$$, :a_id),
                 '22023', NULL, 'renew rejects a NULL token');
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => %s, token => %L, lease => '0 seconds')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew rejects a zero lease, even from the holder');
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => %s, token => %L, lease => '-5 seconds')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew rejects a negative lease');
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => %s, token => %L, lease => NULL)$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew rejects a NULL lease');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.renew(job_id => %s, token => %L)$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not renew a lease');
RESET ROLE;

-- A's lease expires; nobody has reclaimed the job yet.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :a_id;
RESET ROLE;
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset

SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :a_id, token => :'a_token'),
          NULL::timestamptz,
          'the holder cannot renew a lease that has already expired, even before a reclaim');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a renew refused for an expired lease leaves the deadline in the past');

-- Worker B reclaims the job: A's token is stale.
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS b_id, token AS b_token
  FROM taskboard.claim(queue => 'renew-a', worker => 'worker-b') \gset
RESET ROLE;
SELECT is(:b_id::bigint, :a_id::bigint, 'worker B reclaims the expired job');
SELECT isnt(:'b_token'::uuid, :'a_token'::uuid, 'the reclaim issues a new token');

SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :a_id, token => :'a_token'),
          NULL::timestamptz,
          'a stale token cannot renew the lease after another worker reclaimed the job');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a stale renew leaves the new holder''s lease untouched');

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.renew(job_id => :a_id, token => :'b_token'),
            NULL::timestamptz,
            'the new holder can renew its lease');
SELECT ok(taskboard.complete(job_id => :a_id, token => :'b_token'),
          'the new holder completes the job');
SELECT is(taskboard.renew(job_id => :a_id, token => :'b_token'),
          NULL::timestamptz,
          'a completed job''s token cannot renew');
RESET ROLE;

-- Fail, release and cancel end the token too.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-f') AS f_id \gset
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-r') AS r_id \gset
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-c') AS c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS f_token FROM taskboard.claim(queue => 'renew-f', worker => 'worker-a') WHERE job_id = :f_id \gset
SELECT token AS r_token FROM taskboard.claim(queue => 'renew-r', worker => 'worker-a') WHERE job_id = :r_id \gset
SELECT token AS c_token FROM taskboard.claim(queue => 'renew-c', worker => 'worker-a') WHERE job_id = :c_id \gset
SELECT is(taskboard.fail(job_id => :f_id, token => :'f_token', error => 'boom', retry_in => '1 hour'),
          'queued', 'the holder fails job F with attempts left');
SELECT ok(taskboard.release(job_id => :r_id, token => :'r_token', delay => '1 hour'),
          'the holder releases job R');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job C');
RESET ROLE;

SELECT to_jsonb(j) AS f_row FROM taskboard.jobs AS j WHERE id = :f_id \gset
SELECT to_jsonb(j) AS r_row FROM taskboard.jobs AS j WHERE id = :r_id \gset
SELECT to_jsonb(j) AS c_row FROM taskboard.jobs AS j WHERE id = :c_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :f_id, token => :'f_token'), NULL::timestamptz,
          'a token cannot renew after its own fail');
SELECT is(taskboard.renew(job_id => :r_id, token => :'r_token'), NULL::timestamptz,
          'a token cannot renew after its own release');
SELECT is(taskboard.renew(job_id => :c_id, token => :'c_token'), NULL::timestamptz,
          'a token cannot renew after its job was cancelled');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :f_id), :'f_row'::jsonb,
          'a renew after fail leaves the queued job unchanged');
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :r_id), :'r_row'::jsonb,
          'a renew after release leaves the queued job unchanged');
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :c_id), :'c_row'::jsonb,
          'a renew after cancel leaves the cancelled job unchanged');

-- A token of one job does not renew another.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-x') AS x_id \gset
SELECT taskboard.enqueue(task => 'resize_image', queue => 'renew-y') AS y_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS x_token FROM taskboard.claim(queue => 'renew-x', worker => 'worker-a') WHERE job_id = :x_id \gset
SELECT token AS y_token FROM taskboard.claim(queue => 'renew-y', worker => 'worker-a') WHERE job_id = :y_id \gset
RESET ROLE;
SELECT to_jsonb(j) AS y_row FROM taskboard.jobs AS j WHERE id = :y_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.renew(job_id => :y_id, token => :'x_token'), NULL::timestamptz,
          'the token of one job cannot renew another job');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :y_id), :'y_row'::jsonb,
          'renewing with another job''s token leaves that job unchanged');

-- An administrator holds the worker's rights.
SET LOCAL ROLE taskboard_admin;
SELECT isnt(taskboard.renew(job_id => :y_id, token => :'y_token'), NULL::timestamptz,
            'an administrator can renew with the current token');
RESET ROLE;

-- lease bounded by the deadline it gives ------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT taskboard.renew(1, gen_random_uuid(), '12000 mon -360000 days 11 hours')$$,
    'lease must be at most 12 hours, got %', 'a worker cannot renew with a lease of months less days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
