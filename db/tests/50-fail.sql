-- fail(job_id, token, error, retry_in, retry, traceback): the holder
-- reports a failed attempt. With attempts left the job is queued again at
-- clock + retry_in (NULL: 2^attempt s +/- 25 %, capped at one hour); with
-- none left, or with retry => false, it is dead. The error is recorded with
-- attempt, worker and time, and the traceback (bounded) when given. NULL
-- when the token is not current, and nothing changes.

BEGIN;
SELECT plan(61);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-a') AS a_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim(queue => 'fail-a', worker => 'worker-a') WHERE job_id = :a_id \gset
RESET ROLE;

-- Bad input and grants, while worker-a holds job a.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x', retry_in => '0 seconds')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'fail rejects a zero retry_in, even from the holder');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x', retry_in => '-1 minute')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'fail rejects a negative retry_in');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => NULL, token => %L, error => 'x')$$, :'a_token'),
                 '22023', NULL, 'fail rejects a NULL job_id');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => NULL, error => 'x')$$, :a_id),
                 '22023', NULL, 'fail rejects a NULL token');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x', retry => NULL)$$,
                        :a_id, :'a_token'),
                 '22023', 'retry must not be NULL (true: retry while attempts are left; false: dead at once)',
                 'fail rejects a NULL retry, naming it');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x', retry => false, retry_in => '0 seconds')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'fail rejects a zero retry_in also with retry => false');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x')$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not fail a job');
SELECT throws_ok(format($$SELECT taskboard.fail(job_id => %s, token => %L, error => 'x', retry => false)$$, :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not make a job dead with retry => false');
RESET ROLE;

-- Tokens that are not current.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :a_id, token => gen_random_uuid(), error => 'x'),
          NULL, 'a random token cannot fail a running job');
SELECT is(taskboard.fail(job_id => :unknown_id, token => :'a_token', error => 'x'),
          NULL, 'fail of an unknown job returns NULL');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'rejected and refused failures leave the running job unchanged');

-- First failure, attempts left, default backoff: 2^1 s +/- 25 %.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :a_id, token => :'a_token', error => 'card declined'),
          'queued', 'the holder''s fail with attempts left queues the job again');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz + interval '1.5 seconds'
                             AND :'t1'::timestamptz + interval '2.5 seconds'
             FROM taskboard.jobs WHERE id = :a_id),
          'after attempt 1 the default backoff is 2 seconds +/- 25 %');
SELECT is((SELECT finished_at FROM taskboard.jobs WHERE id = :a_id), NULL,
          'a job queued again has no finished_at');

SET LOCAL ROLE taskboard_producer;
SELECT errors AS a_errors, attempt AS a_attempt FROM taskboard.get_job(job_id => :a_id) \gset
RESET ROLE;
SELECT is(jsonb_array_length(:'a_errors'::jsonb), 1, 'get_job lists one error after one failure');
SELECT is((SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(:'a_errors'::jsonb->0) AS k),
          ARRAY['at', 'attempt', 'error', 'worker'],
          'an error entry has error, attempt, worker and at');
SELECT is((:'a_errors'::jsonb->0) - 'at',
          '{"error": "card declined", "attempt": 1, "worker": "worker-a"}'::jsonb,
          'the error is recorded with its attempt and the worker that failed');
SELECT ok((:'a_errors'::jsonb->0->>'at')::timestamptz BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz,
          'the error is recorded with the server time of the failure');
SELECT is(:a_attempt, 1, 'fail keeps the attempt count');

-- The failed token is spent.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :a_id, token => :'a_token', error => 'again'),
          NULL, 'a token cannot fail the job twice');
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'fail-a', worker => 'worker-b')$$,
                'a failed job is not claimed before its backoff ends');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'a second fail with a spent token changes nothing');

-- Time passes (run_at moved as the owner); worker B takes attempt 2.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :a_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token2, attempt AS a_attempt FROM taskboard.claim(queue => 'fail-a', worker => 'worker-b') WHERE job_id = :a_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :a_id, token => :'a_token2', error => 'gateway timeout'),
          'queued', 'attempt 2 fails with attempts left');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz + interval '3 seconds'
                             AND :'t1'::timestamptz + interval '5 seconds'
             FROM taskboard.jobs WHERE id = :a_id),
          'after attempt 2 the default backoff is 4 seconds +/- 25 %');

-- Attempt 3 with an explicit retry_in.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :a_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token3 FROM taskboard.claim(queue => 'fail-a', worker => 'worker-c') WHERE job_id = :a_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :a_id, token => :'a_token3', error => 'rate limited', retry_in => '10 minutes'),
          'queued', 'attempt 3 fails with an explicit retry_in');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz + interval '10 minutes'
                             AND :'t1'::timestamptz + interval '10 minutes'
             FROM taskboard.jobs WHERE id = :a_id),
          'with retry_in the job is queued at the server clock plus retry_in, without jitter');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT jsonb_agg(e.x - 'at' ORDER BY e.o)
             FROM taskboard.get_job(job_id => :a_id) AS g,
                  jsonb_array_elements(g.errors) WITH ORDINALITY AS e(x, o)),
          '[{"error": "card declined",   "attempt": 1, "worker": "worker-a"},
            {"error": "gateway timeout", "attempt": 2, "worker": "worker-b"},
            {"error": "rate limited",    "attempt": 3, "worker": "worker-c"}]'::jsonb,
          'each failed attempt is appended to the error history, oldest first');
RESET ROLE;

-- No attempts left: dead.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-d', max_attempts => 2) AS d_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS d_token FROM taskboard.claim(queue => 'fail-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'first', retry_in => '1 second'),
          'queued', 'attempt 1 of 2 is queued again');
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :d_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS d_token FROM taskboard.claim(queue => 'fail-d', worker => 'worker-b') WHERE job_id = :d_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'last', retry_in => '1 minute'),
          'dead', 'the holder''s fail of the last attempt makes the job dead, whatever retry_in says');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT state = 'dead' AND finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
             FROM taskboard.jobs WHERE id = :d_id),
          'a dead job has finished_at from the server clock');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT (g.errors->-1) - 'at' FROM taskboard.get_job(job_id => :d_id) AS g),
          '{"error": "last", "attempt": 2, "worker": "worker-b"}'::jsonb,
          'the last failure is recorded on the dead job');
RESET ROLE;
SELECT to_jsonb(j) AS d_row FROM taskboard.jobs AS j WHERE id = :d_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'after death'),
          NULL, 'a token cannot fail a dead job');
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'fail-d', worker => 'worker-c')$$,
                'a dead job is never claimed');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :d_id), :'d_row'::jsonb,
          'a fail refused on a dead job changes nothing');

-- A stale token after a reclaim.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-s') AS s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_stale FROM taskboard.claim(queue => 'fail-s', worker => 'worker-a') WHERE job_id = :s_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'fail-s', worker => 'worker-b') WHERE job_id = :s_id \gset
RESET ROLE;
SELECT to_jsonb(j) AS s_row FROM taskboard.jobs AS j WHERE id = :s_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :s_id, token => :'s_stale', error => 'stale worker gave up'),
          NULL, 'a stale token cannot fail the job after another worker reclaimed it');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :s_id), :'s_row'::jsonb,
          'a stale fail records no error and leaves the new holder''s lease alone');

-- A current token whose lease expired, nobody having reclaimed the job.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :s_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :s_id, token => :'s_token', error => 'slow', retry_in => '1 hour'),
          'queued', 'a current token can still fail its job after the lease expired, when nobody reclaimed it');
RESET ROLE;

-- Cancelled while running.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-c') AS c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS c_token FROM taskboard.claim(queue => 'fail-c', worker => 'worker-a') WHERE job_id = :c_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job c');
RESET ROLE;
SELECT to_jsonb(j) AS c_row FROM taskboard.jobs AS j WHERE id = :c_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :c_id, token => :'c_token', error => 'interrupted'),
          NULL, 'the holder cannot fail a job after it was cancelled');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :c_id), :'c_row'::jsonb,
          'a fail after cancel leaves the job cancelled, with no error recorded');

-- The default backoff is capped at one hour.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-h', max_attempts => 20) AS h_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET attempt = 14 WHERE id = :h_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS h_token, attempt AS h_attempt FROM taskboard.claim(queue => 'fail-h', worker => 'worker-a') WHERE job_id = :h_id \gset
RESET ROLE;
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :h_id, token => :'h_token', error => 'still down'),
          'queued', 'attempt 15 of 20 fails with attempts left');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is(:h_attempt, 15, 'the job was on its fifteenth attempt (2^15 s is about nine hours)');
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz + interval '50 minutes'
                             AND :'t1'::timestamptz + interval '1 hour'
             FROM taskboard.jobs WHERE id = :h_id),
          'the default backoff of a late attempt is capped at one hour');

-- retry => false: a non-retryable error makes the job dead at once.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-n', max_attempts => 5) AS n_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS n_token FROM taskboard.claim(queue => 'fail-n', worker => 'worker-a') WHERE job_id = :n_id \gset
RESET ROLE;
SELECT run_at AS n_run_at FROM taskboard.jobs WHERE id = :n_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :n_id, token => gen_random_uuid(), error => 'card stolen', retry => false),
          NULL, 'a token that is not current cannot make the job dead');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :n_id), 'running',
          'a refused retry => false leaves the job running');
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :n_id, token => :'n_token', error => 'card stolen', retry => false,
                         retry_in => '1 minute'),
          'dead', 'retry => false makes the job dead on attempt 1 of 5, whatever retry_in says');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT ok((SELECT state = 'dead' AND finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz
                  AND run_at = :'n_run_at'::timestamptz AND attempt = 1
             FROM taskboard.jobs WHERE id = :n_id),
          'the job is dead with finished_at from the server clock, its run_at and attempt unchanged');
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT (g.errors->-1) - 'at' FROM taskboard.get_job(job_id => :n_id) AS g),
          '{"error": "card stolen", "attempt": 1, "worker": "worker-a"}'::jsonb,
          'the non-retryable error is recorded, with no traceback key when none was given');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :n_id, token => :'n_token', error => 'again', retry => false),
          NULL, 'a token cannot fail the job it made dead');
SELECT is_empty($$SELECT * FROM taskboard.claim(queue => 'fail-n', worker => 'worker-b')$$,
                'a job made dead by retry => false is never claimed');
RESET ROLE;

-- An administrator holding a claim fails it the same way.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-m') AS m_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT token AS m_token FROM taskboard.claim(queue => 'fail-m', worker => 'admin-1') WHERE job_id = :m_id \gset
SELECT is(taskboard.fail(job_id => :m_id, token => :'m_token', error => 'bad data', retry => false,
                         traceback => 'Traceback (most recent call last):' || E'\n' || 'ValueError: bad data'),
          'dead', 'an administrator may fail with retry => false and a traceback');
RESET ROLE;

-- The traceback is stored in the error entry, bounded, keeping its end.
SET LOCAL ROLE taskboard_producer;
SELECT is((SELECT g.errors->-1->>'traceback' FROM taskboard.get_job(job_id => :m_id) AS g),
          'Traceback (most recent call last):' || E'\n' || 'ValueError: bad data',
          'the traceback is stored under the key traceback of the error entry');
SELECT taskboard.enqueue(task => 'charge_card', queue => 'fail-t') AS t_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS t_token FROM taskboard.claim(queue => 'fail-t', worker => 'worker-a') WHERE job_id = :t_id \gset
RESET ROLE;
-- 20021 characters: 'frame NNNNN' lines, the last one naming the exception.
SELECT string_agg(format('frame %s', lpad(i::text, 5, '0')), E'\n' ORDER BY i) || E'\nKeyError: the end'
           AS long_tb
  FROM generate_series(1, 1667) AS i \gset
SELECT is(length(:'long_tb'), 20021, 'the long traceback of this test is 20021 characters');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(job_id => :t_id, token => :'t_token', error => 'KeyError: the end',
                         retry_in => '1 second', traceback => :'long_tb'),
          'queued', 'a fail with a long traceback and attempts left queues the job again');
RESET ROLE;
SELECT errors->-1->>'traceback' AS stored_tb FROM taskboard.jobs WHERE id = :t_id \gset
SELECT ok(length(:'stored_tb') <= 16384, 'a traceback is stored in at most 16384 characters');
SELECT ok(right(:'stored_tb', 16000) = right(:'long_tb', 16000),
          'a long traceback keeps its last 16000 characters, where the exception is');
SELECT is(split_part(:'stored_tb', E'\n', 1),
          '[traceback cut: its first 4021 characters are not stored]',
          'a cut traceback starts with a line saying how many characters were cut');

-- A traceback of exactly 16384 characters is stored whole.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :t_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS t_token FROM taskboard.claim(queue => 'fail-t', worker => 'worker-b') WHERE job_id = :t_id \gset
SELECT is(taskboard.fail(job_id => :t_id, token => :'t_token', error => 'e', retry_in => '1 second',
                         traceback => repeat('x', 16384)),
          'queued', 'a fail with a traceback of 16384 characters queues the job again');
RESET ROLE;
SELECT is((SELECT errors->-1->>'traceback' FROM taskboard.jobs WHERE id = :t_id), repeat('x', 16384),
          'a traceback of 16384 characters is stored whole');

-- The four-argument call of 0.1.0 and 0.2.0, by position too, resolves to this fail.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :t_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS t_token FROM taskboard.claim(queue => 'fail-t', worker => 'worker-c') WHERE job_id = :t_id \gset
SELECT is(taskboard.fail(:t_id, :'t_token'::uuid, 'positional', '1 second'::interval),
          'queued', 'fail called by position with four arguments retries as before');
RESET ROLE;

-- retry_in bounded by the deadline it gives ---------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT taskboard.fail(1, gen_random_uuid(), 'e', '12000 mon -360000 days 11 hours')$$,
    'retry_in must be at most 12 hours, got %', 'a worker cannot fail with a retry_in of months less days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
