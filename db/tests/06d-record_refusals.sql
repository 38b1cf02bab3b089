-- record_refusals(kind, job_ids, tokens): the one writer of refused writes'
-- history lines, which complete_many, renew_many and fail call (through them
-- complete and renew). It is the owner's only.

BEGIN;
SELECT plan(5);

DELETE FROM taskboard.jobs;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.record_refusals('refused_renew', '{}', '{}')$$, '42501', NULL,
    'a worker cannot call record_refusals');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.record_refusals('refused_renew', '{}', '{}')$$, '42501', NULL,
    'an admin cannot call record_refusals');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('r', '{}', 'refusals') AS id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS first FROM taskboard.claim('refusals', 'worker-a') \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :id;
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.claim('refusals', 'worker-b');
RESET ROLE;

SELECT taskboard.record_refusals('refused_renew', ARRAY[:id, :id]::bigint[],
                                 ARRAY[:'first', gen_random_uuid()]::uuid[]);
SELECT results_eq(
    $$SELECT kind, worker, attempt FROM taskboard.job_events
       WHERE job_id = $$ || :id || $$ AND kind = 'refused_renew'$$,
    $$VALUES ('refused_renew', 'worker-a', 1)$$,
    'the reclaimed token gets one line with its lease''s worker and attempt; an unknown token none');

SELECT taskboard.record_refusals('refused_renew', ARRAY[:id]::bigint[], ARRAY[:'first']::uuid[]);
SELECT is((SELECT count(*) FROM taskboard.job_events WHERE job_id = :id AND kind = 'refused_renew'),
    1::bigint, 'a second refusal of the same token and kind writes nothing');

SELECT taskboard.record_refusals('refused_fail', ARRAY[:id]::bigint[], ARRAY[:'first']::uuid[]);
SELECT is((SELECT count(*) FROM taskboard.job_events WHERE job_id = :id AND kind LIKE 'refused_%'),
    2::bigint, 'another kind is a line of its own');

SELECT * FROM finish();
ROLLBACK;
