-- Bounds every function checks before it touches a row: durations of at most
-- 12 hours, finite run_at, arrays that are one-dimensional and hold no NULL.
-- Each refusal is 22023 with a message naming the argument, and writes
-- nothing. ('infinity' intervals exist from PostgreSQL 17 on: tests/sql/test_bounds.py.)

BEGIN;
SELECT plan(21);

SET LOCAL ROLE taskboard_worker;

SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'q', worker => 'w', lease => '12 hours 1 second')$$,
    '22023', 'lease must be at most 12 hours, got 12:00:01', 'claim refuses a lease over 12 hours');
SELECT lives_ok($$SELECT * FROM taskboard.claim(queue => 'q', worker => 'w', lease => '12 hours')$$,
    'claim takes a lease of exactly 12 hours');
SELECT throws_ok($$SELECT taskboard.renew(job_id => 1, token => gen_random_uuid(), lease => '13 hours')$$,
    '22023', 'lease must be at most 12 hours, got 13:00:00', 'renew refuses a lease over 12 hours');
SELECT throws_ok($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[1]::bigint[], tokens => ARRAY[gen_random_uuid()], lease => '1 day')$$,
    '22023', 'lease must be at most 12 hours, got 1 day', 'renew_many refuses a lease over 12 hours');
SELECT throws_ok($$SELECT taskboard.fail(job_id => 1, token => gen_random_uuid(), error => 'e', retry_in => '12 hours 1 minute')$$,
    '22023', 'retry_in must be at most 12 hours, got 12:01:00', 'fail refuses a retry_in over 12 hours');
SELECT throws_ok($$SELECT taskboard.release(job_id => 1, token => gen_random_uuid(), delay => '2 days')$$,
    '22023', 'delay must be at most 12 hours, got 2 days', 'release refuses a delay over 12 hours');

-- Arrays: NULL elements and more than one dimension.
SELECT throws_ok($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[1, NULL]::bigint[], tokens => ARRAY[gen_random_uuid(), gen_random_uuid()])$$,
    '22023', 'job_ids must not contain NULL', 'renew_many refuses a NULL job id');
SELECT throws_ok($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[1, 2]::bigint[], tokens => ARRAY[gen_random_uuid(), NULL])$$,
    '22023', 'tokens must not contain NULL', 'renew_many refuses a NULL token');
SELECT throws_ok($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[[1, 2], [3, 4]]::bigint[], tokens => ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid()])$$,
    '22023', 'job_ids and tokens must be one-dimensional arrays', 'renew_many refuses a two-dimensional array');
SELECT throws_ok($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[NULL]::bigint[], tokens => ARRAY[gen_random_uuid()])$$,
    '22023', 'job_ids must not contain NULL', 'complete_many refuses a NULL job id');
SELECT throws_ok($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[1]::bigint[], tokens => ARRAY[NULL]::uuid[])$$,
    '22023', 'tokens must not contain NULL', 'complete_many refuses a NULL token');
SELECT throws_ok($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[[1], [2]]::bigint[], tokens => ARRAY[gen_random_uuid(), gen_random_uuid()])$$,
    '22023', 'job_ids, tokens and results must be one-dimensional arrays', 'complete_many refuses a two-dimensional array');
SELECT lives_ok($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[1]::bigint[], tokens => ARRAY[gen_random_uuid()], results => ARRAY[NULL]::jsonb[])$$,
    'complete_many takes a NULL result (no result for that job)');

RESET ROLE;
SET LOCAL ROLE taskboard_producer;

SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', run_at => 'infinity')$$,
    '22023', 'run_at must be a finite time, got infinity', 'enqueue refuses run_at infinity');
SELECT throws_ok($$SELECT taskboard.enqueue(task => 't', run_at => '-infinity')$$,
    '22023', 'run_at must be a finite time, got -infinity', 'enqueue refuses run_at -infinity');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], run_at => 'infinity')$$,
    '22023', 'run_at must be a finite time, got infinity', 'enqueue_many refuses run_at infinity');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], run_at => '-infinity')$$,
    '22023', 'run_at must be a finite time, got -infinity', 'enqueue_many refuses run_at -infinity');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', NULL]::jsonb[])$$,
    '22023', 'payloads must not contain NULL', 'enqueue_many refuses a NULL payload');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY[['{}'], ['{}']]::jsonb[])$$,
    '22023', 'payloads and dedupe_keys must be one-dimensional arrays', 'enqueue_many refuses a two-dimensional array');

RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.jobs WHERE task = 't'), 0::bigint,
    'no refused call wrote a job');
SELECT is((SELECT count(*) FROM taskboard.jobs WHERE claimed_by = 'w'), 0::bigint,
    'no refused call claimed a job');

SELECT * FROM finish();
ROLLBACK;
