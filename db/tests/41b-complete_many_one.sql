-- complete_many of one job: an accepted completion takes one update through
-- the primary key; anything else (a stale or unknown token, a finished job,
-- the same holder asking again) takes the full statement. Both give the
-- answers complete gives, and the refusal is recorded once.

BEGIN;
SELECT plan(15);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', '{}', 'one-a') AS a \gset
SELECT taskboard.enqueue('mail', '{}', 'one-b') AS b \gset
SELECT taskboard.enqueue('mail', '{}', 'one-c') AS c \gset
SELECT taskboard.enqueue('mail', '{}', 'one-d') AS d \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS ta FROM taskboard.claim('one-a', 'worker-a') \gset
SELECT token AS tb FROM taskboard.claim('one-b', 'worker-a') \gset
SELECT token AS td FROM taskboard.claim('one-d', 'worker-a') \gset
RESET ROLE;

-- Accepted, with a result and without.
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[], ARRAY['{"sent": 1}']::jsonb[])$$,
           :a, :'ta'),
    format($$VALUES (%s::bigint, true)$$, :a),
    'the holder completes its one job');
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :b, :'tb'),
    format($$VALUES (%s::bigint, true)$$, :b),
    'and one job without results');
RESET ROLE;
SELECT results_eq(
    format($$SELECT state, result, finished_at IS NOT NULL FROM taskboard.jobs WHERE id IN (%s, %s) ORDER BY id$$, :a, :b),
    $$VALUES ('succeeded'::text, '{"sent": 1}'::jsonb, true), ('succeeded', NULL, true)$$,
    'each is succeeded, its result stored, its finish stamped');

-- Arrays whose lower bound is not 1: each element read where it is.
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(%L::bigint[], %L::uuid[], '[0:0]={"{\"n\": 1}"}'::jsonb[])$$,
           '[0:0]={' || :d || '}', '[5:5]={' || :'td' || '}'),
    format($$VALUES (%s::bigint, true)$$, :d),
    'one job given in arrays of other lower bounds is completed');
RESET ROLE;
SELECT is((SELECT result FROM taskboard.jobs WHERE id = :d), '{"n": 1}'::jsonb,
    'with the result given for it');

-- The same holder asking again: true, nothing changed.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a \gset
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[], ARRAY['{"sent": 2}']::jsonb[])$$,
           :a, :'ta'),
    format($$VALUES (%s::bigint, true)$$, :a),
    'the holder asking again after its success is answered true');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a), :'a_row'::jsonb,
    'and the job is left as it was');

-- Unknown ids and tokens: false, nothing written.
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[gen_random_uuid()])$$, :unknown_id),
    format($$VALUES (%s::bigint, false)$$, :unknown_id),
    'a job that does not exist is refused');
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[gen_random_uuid()])$$, :c),
    format($$VALUES (%s::bigint, false)$$, :c),
    'a queued job is refused');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :c), 'queued', 'and stays queued');

-- A stale holder: its lease ran out and worker B reclaimed the job.
SET LOCAL ROLE taskboard_worker;
SELECT token AS tc FROM taskboard.claim('one-c', 'worker-a') \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :c;
SET LOCAL ROLE taskboard_worker;
SELECT token AS tc2 FROM taskboard.claim('one-c', 'worker-b') \gset
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :c, :'tc'),
    format($$VALUES (%s::bigint, false)$$, :c),
    'the stale holder''s completion of its one job is refused');
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :c, :'tc'),
    format($$VALUES (%s::bigint, false)$$, :c),
    'and refused again');
RESET ROLE;
SELECT results_eq(
    format($$SELECT state, lease_token, result FROM taskboard.jobs WHERE id = %s$$, :c),
    format($$VALUES ('running'::text, %L::uuid, NULL::jsonb)$$, :'tc2'),
    'the job stays the new holder''s, untouched');
SELECT results_eq(
    format($$SELECT kind, worker FROM taskboard.job_events WHERE job_id = %s ORDER BY id$$, :c),
    $$VALUES ('reclaimed'::text, 'worker-a'::text), ('refused_complete', 'worker-a')$$,
    'the refusal is a line of the history, once');
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT * FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :c, :'tc2'),
    format($$VALUES (%s::bigint, true)$$, :c),
    'the new holder completes it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
