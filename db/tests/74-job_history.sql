-- A job's history: the lease a reclaim took over, a cancel under a live
-- lease, an admin retry, and the late writes the fence refused, with the
-- refused holder's fence. Only a token the history knows is recorded, once
-- per token and kind; the common path (a claim of a queued job, an
-- accepted complete or renew) writes nothing.
--
-- Worker A stalls: its lease expires by moving the deadline into the past
-- as the owner, worker B reclaims, then A's late writes come in.

BEGIN;
SELECT plan(39);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', '{}', 'hq', max_attempts => 3) AS a \gset
RESET ROLE;

-- The common path writes no history.
SET LOCAL ROLE taskboard_worker;
SELECT token AS ta, fence AS fa FROM taskboard.claim('hq', 'worker-a') \gset
SELECT isnt(taskboard.renew(:a, :'ta'::uuid), NULL, 'the holder renews its lease');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.job_events WHERE job_id = :a), 0::bigint,
    'a claim of a queued job and an accepted renew write no history');

-- A stalls; its lease runs out; B reclaims.
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :a;
SET LOCAL ROLE taskboard_worker;
SELECT token AS tb, fence AS fb FROM taskboard.claim('hq', 'worker-b') \gset
RESET ROLE;
SELECT results_eq(
    $$SELECT kind, worker, actor, actor_worker, fence FROM taskboard.job_events WHERE job_id = $$ || :a,
    $$VALUES ('reclaimed'::text, 'worker-a'::text, 'taskboard_worker'::text, 'worker-b'::text, $$ || :fa || $$::bigint)$$,
    'the reclaim is a line: lease expired on worker A, reclaimed by B as the role in force, with A''s fence');
SELECT is((SELECT actor_worker FROM taskboard.job_history(:a) WHERE kind = 'reclaimed'), 'worker-b',
    'job_history shows the worker name the reclaiming claim stated, beside its role');

-- A's late writes: refused, each recorded once.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'ta'::uuid, '{"sent": true}'), false, 'A''s late complete is refused');
SELECT is(taskboard.complete(:a, :'ta'::uuid, '{"sent": true}'), false, 'and refused again');
SELECT is(taskboard.renew(:a, :'ta'::uuid), NULL, 'A''s late renew is refused');
SELECT is((SELECT r.lease_expires_at FROM taskboard.renew_many(ARRAY[:a]::bigint[], ARRAY[:'ta']::uuid[]) AS r),
    NULL, 'A''s late renew_many is refused');
SELECT is(taskboard.fail(:a, :'ta'::uuid, 'smtp timeout'), NULL, 'A''s late fail is refused');
SELECT is(taskboard.fail(:a, :'ta'::uuid, 'smtp timeout'), NULL, 'and refused again');
RESET ROLE;
SELECT results_eq(
    $$SELECT kind, worker, fence, attempt FROM taskboard.job_events WHERE job_id = $$ || :a || $$ ORDER BY id$$,
    $$VALUES ('reclaimed'::text, 'worker-a'::text, $$ || :fa || $$::bigint, 1),
             ('refused_complete', 'worker-a', $$ || :fa || $$, 1),
             ('refused_renew', 'worker-a', $$ || :fa || $$, 1),
             ('refused_fail', 'worker-a', $$ || :fa || $$, 1)$$,
    'each refused kind is one line with A''s fence and attempt, however often A repeats it');

-- A token never issued is not recorded.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, gen_random_uuid()), false, 'a token never issued cannot complete');
SELECT is(taskboard.renew(:a, gen_random_uuid()), NULL, 'nor renew');
SELECT is(taskboard.fail(:a, gen_random_uuid(), 'x'), NULL, 'nor fail');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.complete_many(
               ARRAY[:a, :a, :a]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()])
            WHERE NOT completed), 3::bigint, 'nor complete_many');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.renew_many(
               ARRAY[:a, :a]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()])
            WHERE lease_expires_at IS NULL), 2::bigint, 'nor renew_many');
-- A job B does not hold, with B's token: refused, never reclaimed, not recorded.
SELECT is(taskboard.complete(:a + 1000000, :'tb'::uuid), false, 'a token presented for another job is refused');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.job_events), 4::bigint,
    'refusals by tokens the history does not know add no line');

-- B completes: accepted, nothing more written.
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'tb'::uuid, '{"sent": true}'), true, 'B completes');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.job_events WHERE job_id = :a), 4::bigint,
    'an accepted complete writes no history');

-- A cancel under a live lease, its holder's late writes, an admin retry.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', '{}', 'hq2') AS c \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS tc, fence AS fc FROM taskboard.claim('hq2', 'worker-c') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(:c), true, 'the admin cancels the running job');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT completed FROM taskboard.complete_many(ARRAY[:c]::bigint[], ARRAY[:'tc']::uuid[])),
    false, 'the holder''s complete_many after the cancel is refused');
SELECT is((SELECT completed FROM taskboard.complete_many(ARRAY[:c, :c]::bigint[], ARRAY[:'tc', :'tc']::uuid[]) LIMIT 1),
    false, 'and refused again, the token twice in one call');
SELECT is((SELECT r.lease_expires_at FROM taskboard.renew_many(ARRAY[:c]::bigint[], ARRAY[:'tc']::uuid[]) AS r),
    NULL, 'the holder''s renew_many after the cancel is refused');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(:c), true, 'the admin retries it');
SELECT results_eq(
    $$SELECT kind, worker, actor IS NOT NULL, fence FROM taskboard.job_history($$ || :c || $$)$$,
    $$VALUES ('cancelled'::text, 'worker-c'::text, true, $$ || :fc || $$::bigint),
             ('refused_complete', 'worker-c', false, $$ || :fc || $$),
             ('refused_renew', 'worker-c', false, $$ || :fc || $$),
             ('retried', NULL, true, NULL)$$,
    'job_history reads the cancel under a live lease, the holder''s refused writes once each, and the retry, oldest first');
SELECT is((SELECT actor FROM taskboard.job_history(:c) WHERE kind = 'retried'), 'taskboard_admin',
    'a retry names the role in force that asked (SET ROLE), not the login');
SELECT is_empty($$SELECT FROM taskboard.job_history($$ || :c || $$) WHERE actor_worker IS NOT NULL$$,
    'only a reclaim has an actor_worker: a cancel, a retry and a refused write have none');
SELECT throws_ok($$SELECT * FROM taskboard.job_history(NULL)$$, '22023', NULL,
    'job_history rejects a NULL job_id');
SELECT is_empty($$SELECT * FROM taskboard.job_history(-1)$$, 'an unknown job has no history');
RESET ROLE;

-- Tokens are credentials: the history stores a digest, job_history shows none.
SELECT is_empty(
    $$SELECT FROM information_schema.columns
       WHERE table_schema = 'taskboard' AND table_name = 'job_events' AND data_type = 'uuid'$$,
    'job_events stores no token');
SELECT unalike(
    (SELECT pg_catalog.pg_get_function_result('taskboard.job_history(bigint)'::regprocedure)),
    '%token%', 'job_history returns no token nor its digest');

SELECT table_privs_are('taskboard', 'job_events', r, ARRAY[]::name[],
                       r || ' has no privilege on taskboard.job_events: job_history is the way in')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.job_history(1)$$, '42501', NULL,
    'a worker cannot read the history');
RESET ROLE;
SELECT is_definer('taskboard', 'job_history', ARRAY['bigint'], 'job_history is SECURITY DEFINER');

-- The history goes with its job.
DELETE FROM taskboard.jobs WHERE id = :a;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.job_events WHERE job_id = :a), 0::bigint,
    'deleting a job (prune) deletes its history');

SELECT * FROM finish();
ROLLBACK;
