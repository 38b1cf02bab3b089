-- complete_held(job_ids, tokens, results, clock): complete_many's write for
-- more than one job, called directly. It marks succeeded, with its result
-- and finished_at = clock, each job running under its given token, answers
-- how many, and leaves every other job as it was. Internal: the
-- application roles cannot call it; complete_many does (41-complete_many).

BEGIN;
SELECT plan(8);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.complete_held('{1}', '{00000000-0000-0000-0000-000000000000}', NULL, now())$$,
    '42501', NULL, 'an admin cannot call complete_held');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.complete_held('{1}', '{00000000-0000-0000-0000-000000000000}', NULL, now())$$,
    '42501', NULL, 'a worker cannot call complete_held');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT taskboard.enqueue(task => 't', queue => 'ch') AS a \gset
SELECT taskboard.enqueue(task => 't', queue => 'ch') AS b \gset
SELECT taskboard.enqueue(task => 't', queue => 'ch') AS c \gset
SELECT taskboard.enqueue(task => 't', queue => 'ch') AS q \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w',
       started_at = now(), lease_expires_at = now() + interval '1 minute'
 WHERE id IN (:a, :b, :c);
SELECT lease_token AS ta FROM taskboard.jobs WHERE id = :a \gset
SELECT lease_token AS tb FROM taskboard.jobs WHERE id = :b \gset

-- a and b under their tokens, c under a token it does not hold, q queued.
SELECT is(taskboard.complete_held(ARRAY[:b, :a, :c, :q]::bigint[],
                                  ARRAY[:'tb', :'ta', gen_random_uuid(), gen_random_uuid()]::uuid[],
                                  ARRAY['{"b": 1}', '{"a": 1}', NULL, NULL]::jsonb[],
                                  '2030-01-01 00:00:00+00'),
          2::bigint, 'complete_held answers how many jobs it completed');
SELECT is(
    ARRAY(SELECT state || ' ' || coalesce(result::text, '-') || ' ' || coalesce(finished_at = '2030-01-01 00:00:00+00', false)
            FROM taskboard.jobs WHERE queue = 'ch' ORDER BY id),
    ARRAY['succeeded {"a": 1} true', 'succeeded {"b": 1} true', 'running - false', 'queued - false'],
    'each job held by its token is succeeded with its own result at the clock given; the others are unchanged');

SELECT is(taskboard.complete_held(ARRAY[:a, :b]::bigint[], ARRAY[:'ta', :'tb']::uuid[], NULL, now()),
          0::bigint, 'a job already succeeded is not completed again');
SELECT is((SELECT finished_at FROM taskboard.jobs WHERE id = :a), '2030-01-01 00:00:00+00'::timestamptz,
    'and keeps its finished_at');

SELECT lease_token AS tc FROM taskboard.jobs WHERE id = :c \gset
SELECT is(taskboard.complete_held(ARRAY[:c]::bigint[], ARRAY[:'tc']::uuid[], NULL, now()),
          1::bigint, 'results NULL: the job is completed');
SELECT is((SELECT result FROM taskboard.jobs WHERE id = :c), NULL::jsonb, 'with no result');

SELECT * FROM finish();
ROLLBACK;
