-- remove_schedule is the admin's: it deletes the row of a schedule no app
-- declares any more, and says whether there was one.

BEGIN;
SELECT plan(5);

SELECT pg_catalog.date_trunc('minute', pg_catalog.clock_timestamp()) - interval '10 minutes' AS slot \gset

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.remove_schedule('nightly')$$,
    '42501', NULL, 'a producer cannot remove a schedule''s row');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.enqueue_periodic(schedule => 'report-old', slot => :'slot', task => 'send_report');
SELECT throws_ok($$SELECT taskboard.remove_schedule('report-old')$$,
    '42501', NULL, 'a worker cannot remove a schedule''s row');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.remove_schedule('report-old'), 'an admin removes the row of a schedule no app declares');
SELECT ok(NOT taskboard.remove_schedule('report-old'), 'removing it again says false: there is no row');
SELECT throws_ok($$SELECT taskboard.remove_schedule(NULL)$$,
    '22023', NULL, 'remove_schedule refuses a NULL schedule with 22023');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
