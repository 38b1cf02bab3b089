-- claim under a queue's limit per concurrency key: a key's holders (running
-- jobs, an expired lease until its job is reclaimed or finished, a cancel's
-- held place until its lease ends) never pass the limit; jobs of other keys
-- and without a key behind a full key are still claimed.

BEGIN;
SELECT plan(9);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'kl', concurrency_key => 'a') AS a1 \gset
SELECT taskboard.enqueue('t', '{}', 'kl', concurrency_key => 'a') AS a2 \gset
SELECT taskboard.enqueue('t', '{}', 'kl', concurrency_key => 'b') AS b1 \gset
SELECT taskboard.enqueue('t', '{}', 'kl') AS n1 \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_key_limit('kl', 1) \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('kl', 'w1', 10) ORDER BY job_id$$,
    format($$VALUES (%s::bigint), (%s::bigint), (%s::bigint)$$, :a1, :b1, :n1),
    'a claim of 10 takes one job of each key and the job without a key; the second of key a waits');
SELECT is_empty($$SELECT * FROM taskboard.claim('kl', 'w2', 10)$$,
    'another claim takes nothing while each key holds its one');
RESET ROLE;
SELECT lease_token AS ta1 FROM taskboard.jobs WHERE id = :a1 \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a1, :'ta1'::uuid), true, 'the job of key a completes');
SELECT results_eq($$SELECT job_id FROM taskboard.claim('kl', 'w2', 10)$$,
    format($$VALUES (%s::bigint)$$, :a2), 'and the next claim takes the second of key a');
RESET ROLE;

-- An expired lease still holds its key until the job is reclaimed.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'kl', concurrency_key => 'a') AS a3 \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :a2;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('kl', 'w3', 10)$$,
    format($$VALUES (%s::bigint)$$, :a2),
    'beside an expired lease of key a, a claim reclaims it and starts no other job of a');
RESET ROLE;

-- A cancel under a live lease holds the key's place until the lease ends.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(:b1), true, 'the running job of key b is cancelled');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'kl', concurrency_key => 'b') AS b2 \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('kl', 'w4', 10)$$,
    'the cancelled job holds key b until its lease ends');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_key_limit('kl', 2), true, 'the key limit is raised to 2');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('kl', 'w4', 10) ORDER BY job_id$$,
    format($$VALUES (%s::bigint), (%s::bigint)$$, :a3, :b2),
    'with room for two a key, the waiting jobs of a and b start');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
