-- revert_losses and release 0.4.8: a revert to 0.4.7 drops the jobs'
-- concurrency keys and the queues' key limits; a revert to 0.4.8 drops
-- nothing; a queue with only a key limit is no "queue settings" row of 0.3.0.

BEGIN;
SELECT plan(4);

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;
DELETE FROM taskboard.schedule_slots;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'rk', queue => 'rk', concurrency_key => 'customer-1');
SELECT taskboard.enqueue_many(task => 'rk', payloads => ARRAY['{}', '{}', '{}']::jsonb[], queue => 'rk',
                              concurrency_keys => ARRAY['customer-1', NULL, 'customer-2']);
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_key_limit('rk', 1);

SELECT results_eq(
    $$SELECT data, added_in, rows FROM taskboard.revert_losses('0.4.7')$$,
    $$VALUES ('concurrency keys', '0.4.8', 3::bigint), ('key limits', '0.4.8', 1::bigint)$$,
    'a revert to 0.4.7 drops three jobs'' keys and one key limit');
SELECT is_empty($$SELECT * FROM taskboard.revert_losses('0.4.8')$$, 'a revert to 0.4.8 drops nothing');
SELECT results_eq(
    $$SELECT data FROM taskboard.revert_losses('0.1.0')$$,
    $$VALUES ('concurrency keys'), ('key limits')$$,
    'what the guard asks for names them too; a key limit alone is not a queue setting of 0.3.0');
SELECT taskboard.set_key_limit('rk', NULL);
SELECT results_eq(
    $$SELECT data FROM taskboard.revert_losses('0.4.7')$$,
    $$VALUES ('concurrency keys')$$,
    'a key limit removed is nothing to drop');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
