-- revert_losses and release 0.4.9: a revert to 0.4.8 drops the queues'
-- rate limits (their log of starts goes with them); a revert to 0.4.9 drops
-- nothing; a queue with only a rate limit is no "queue settings" row of 0.3.0.

BEGIN;
SELECT plan(4);

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;
DELETE FROM taskboard.schedule_slots;

SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_rate_limit('rr', 5, '1 second');
SELECT taskboard.set_rate_limit('rs', 2, '1 minute', by_key => true);

SELECT results_eq(
    $$SELECT data, added_in, rows FROM taskboard.revert_losses('0.4.8')$$,
    $$VALUES ('rate limits', '0.4.9', 2::bigint)$$,
    'a revert to 0.4.8 drops two rate limits');
SELECT is_empty($$SELECT * FROM taskboard.revert_losses('0.4.9')$$, 'a revert to 0.4.9 drops nothing');
SELECT results_eq(
    $$SELECT data FROM taskboard.revert_losses('0.1.0')$$,
    $$VALUES ('rate limits')$$,
    'what the guard asks for names them too; a rate limit alone is not a queue setting of 0.3.0');
SELECT taskboard.set_rate_limit('rr', NULL, NULL);
SELECT taskboard.set_rate_limit('rs', NULL, NULL);
SELECT is_empty($$SELECT * FROM taskboard.revert_losses('0.4.8')$$, 'rate limits removed are nothing to drop');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
