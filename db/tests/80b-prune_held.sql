-- prune keeps a job cancelled under a live lease until that lease ends: the
-- job holds its place under its queue's limit and its dedupe key till then.

BEGIN;
SELECT plan(3);

SELECT taskboard.enqueue('held', '{}', 'prune_held', dedupe_key => 'k') AS job \gset
SELECT taskboard.set_queue_limit('prune_held', 1);
SET LOCAL ROLE taskboard_worker;
SELECT job_id FROM taskboard.claim('prune_held', 'w1', 1, '10 minutes');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(:job);
SELECT is(taskboard.prune('0 seconds'), 0::bigint, 'prune keeps a job whose holder''s lease has not ended');
RESET ROLE;
SELECT isnt(taskboard.enqueue('held', '{}', 'prune_held', dedupe_key => 'k'), NULL::bigint, 'a job with its key is enqueued');
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('prune_held', 'w2', 1, '10 minutes')$$,
    'no job starts in its place beside the holder');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
