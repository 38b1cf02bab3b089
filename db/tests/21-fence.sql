-- The fence: claim hands each holder a number that strictly increases with
-- every claim of the job, a reclaim after a release, an expired lease or a
-- failed attempt included, and across retry. Each job counts its own.
--
-- A worker claims, releases, fails and completes; a lease expires by moving
-- its deadline into the past as the owner; an admin retries.

BEGIN;
SELECT plan(9);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'fq', max_attempts => 2) AS a \gset
SELECT taskboard.enqueue('t', '{}', 'fq2') AS b \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS t1, fence AS f1 FROM taskboard.claim('fq', 'w1') \gset
SELECT is(:f1::bigint, 1::bigint, 'the first claim of a job hands out fence 1');
SELECT is(taskboard.release(:a, :'t1'::uuid), true, 'the holder releases it');
SELECT token AS t2, fence AS f2 FROM taskboard.claim('fq', 'w2') \gset
SELECT cmp_ok(:f2::bigint, '>', :f1::bigint, 'a claim after a release hands out a higher fence');
RESET ROLE;

UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :a;
SET LOCAL ROLE taskboard_worker;
SELECT token AS t3, fence AS f3, attempt AS at3 FROM taskboard.claim('fq', 'w3') \gset
SELECT cmp_ok(:f3::bigint, '>', :f2::bigint, 'reclaiming an expired lease hands out a higher fence');
SELECT is(taskboard.complete(:a, :'t2'::uuid), false, 'the stale holder still cannot complete: the token fences');
SELECT is(taskboard.fail(:a, :'t3'::uuid, 'boom'), 'dead', 'the holder fails its last attempt');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT taskboard.retry(:a) AS retried \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT fence AS f4 FROM taskboard.claim('fq', 'w4') \gset
SELECT cmp_ok(:f4::bigint, '>', :f3::bigint, 'after retry, the fence goes on rising: it never resets');
SELECT is((SELECT fence FROM taskboard.claim('fq2', 'w1')), 1::bigint, 'another job counts its own claims');
RESET ROLE;

SELECT is((SELECT fence FROM taskboard.jobs WHERE id = :a), :f4::bigint,
    'the job keeps the last fence handed out');

SELECT * FROM finish();
ROLLBACK;
