-- revert_losses(release): what a revert to a release would drop, each kind
-- of data with the release that added it and how many rows hold it; only
-- kinds that hold something and came after the release. Admins only; bad
-- input raises 22023. The guard it serves (the revert of change
-- revert_guard) is run as the deploying login in
-- tests/release/test_revert.py.

BEGIN;
SELECT plan(12);

SELECT is_definer('taskboard', 'revert_losses', ARRAY['text'], 'revert_losses is SECURITY DEFINER');
SELECT function_privs_are('taskboard', 'revert_losses', ARRAY['text'], 'taskboard_admin', ARRAY['EXECUTE'],
    'admins may ask what a revert drops');
SELECT function_privs_are('taskboard', 'revert_losses', ARRAY['text'], 'taskboard_worker', ARRAY[]::text[],
    'workers may not');

-- A database with nothing in it: a revert drops nothing --------------------------

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;
DELETE FROM taskboard.schedule_slots;

SET LOCAL ROLE taskboard_admin;
SELECT is_empty($$SELECT * FROM taskboard.revert_losses(NULL)$$, 'an empty database loses nothing, even to a full revert');
SELECT throws_ok($$SELECT * FROM taskboard.revert_losses('v0.2.0')$$, '22023', NULL,
    'a release is written 0.2.0, without the v');
SELECT throws_ok($$SELECT * FROM taskboard.revert_losses('')$$, '22023', NULL, 'an empty release is refused');
RESET ROLE;

-- Data of each kind ---------------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.enqueue(task => 'rl', queue => 'rl', trace_context => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}');
SELECT taskboard.enqueue(task => 'rl', queue => 'rl');
SELECT taskboard.enqueue(task => 'rl', queue => 'rl-other');
SELECT count(*) FROM taskboard.claim(queue => 'rl', worker => 'w', batch => 2);
SELECT taskboard.enqueue_periodic('rl-nightly', date_trunc('minute', clock_timestamp()), 'rl');
RESET ROLE;
SELECT min(id) AS cancel_id FROM taskboard.jobs WHERE queue = 'rl' AND state = 'running' \gset
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.pause('rl-paused');
SELECT taskboard.set_queue_limit('rl-limited', 3);
SELECT taskboard.pause('rl-resumed');
SELECT taskboard.resume('rl-resumed');
SELECT taskboard.cancel(:cancel_id);

SELECT results_eq(
    $$SELECT data, added_in, rows FROM taskboard.revert_losses('0.2.0')$$,
    $$VALUES ('fences', '0.3.0', 2::bigint), ('queue settings', '0.3.0', 2::bigint),
             ('schedules', '0.3.0', 1::bigint), ('started_at', '0.3.0', 2::bigint),
             ('trace contexts', '0.4.0', 1::bigint), ('held places', '0.4.5', 1::bigint),
             ('job history', '0.4.5', 1::bigint), ('slot tasks and queues', '0.4.5', 1::bigint)$$,
    'a revert to 0.2.0 drops fences, queue settings (a resumed queue is no setting), schedules, started_at, trace contexts, a held place, the history and a slot''s task');
SELECT results_eq(
    $$SELECT data, rows FROM taskboard.revert_losses('0.3.0')$$,
    $$VALUES ('trace contexts', 1::bigint), ('held places', 1::bigint), ('job history', 1::bigint),
             ('slot tasks and queues', 1::bigint)$$,
    'a revert to 0.3.0 drops the trace contexts and what 0.4.5 added');
SELECT results_eq(
    $$SELECT data, rows FROM taskboard.revert_losses('0.4.4')$$,
    $$VALUES ('held places', 1::bigint), ('job history', 1::bigint), ('slot tasks and queues', 1::bigint)$$,
    'a revert to 0.4.4 drops the cancelled job''s held place, the cancel in its history and the slot''s task and queue');
SELECT is_empty($$SELECT * FROM taskboard.revert_losses('0.4.5')$$, 'a revert to 0.4.5 drops nothing');
SELECT results_eq(
    $$SELECT data, rows FROM taskboard.revert_losses(NULL) WHERE data = 'jobs'$$,
    $$VALUES ('jobs', 4::bigint)$$,
    'a revert of everything drops every job too');
SELECT results_eq(
    $$SELECT data FROM taskboard.revert_losses('0.1.0')$$,
    $$VALUES ('fences'), ('queue settings'), ('schedules'), ('started_at'), ('trace contexts'),
             ('held places'), ('job history'), ('slot tasks and queues')$$,
    'what the guard asks for: everything a revert to the first release drops, jobs kept');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
