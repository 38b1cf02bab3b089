-- revert_losses and release 0.5.0: a revert to 0.4.9 drops the jobs'
-- dependencies and cancels the waiting jobs; a revert to 0.5.0 drops
-- nothing.

BEGIN;
SELECT plan(3);

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;
DELETE FROM taskboard.schedule_slots;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('p', '{}', 'rd') AS p \gset
SELECT taskboard.enqueue('c', '{}', 'rd', depends_on => ARRAY[:p]);
SELECT taskboard.enqueue('d', '{}', 'rd', depends_on => '{}');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT results_eq(
    $$SELECT data, added_in, rows FROM taskboard.revert_losses('0.4.9')$$,
    $$VALUES ('dependencies', '0.5.0', 1::bigint), ('waiting jobs', '0.5.0', 1::bigint)$$,
    'a revert to 0.4.9 drops one job''s dependencies and cancels one waiting job (an empty depends_on is none)');
SELECT is_empty($$SELECT * FROM taskboard.revert_losses('0.5.0')$$, 'a revert to 0.5.0 drops nothing');
SELECT results_eq(
    $$SELECT data FROM taskboard.revert_losses('0.1.0')$$,
    $$VALUES ('dependencies'), ('waiting jobs')$$,
    'what the guard asks for names them too');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
