-- check_interval(what, value, most): one of the argument checks the functions
-- share. It returns when clock < clock + value <= clock + most and raises
-- 22023 naming the argument otherwise (the bound said in its largest whole
-- unit), with the messages the public functions' tests assert. Internal:
-- the application roles cannot call it, the owner's functions do.

BEGIN;
SELECT plan(17);

-- Who may: the owner only; its functions call it ---------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '1 minute', '12 hours')$$, '42501', NULL,
    'an admin cannot call check_interval');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

SELECT lives_ok($$SELECT taskboard.check_interval('lease', '1 microsecond', '12 hours')$$,
    'the shortest positive interval passes');
SELECT lives_ok($$SELECT taskboard.check_interval('lease', '12 hours', '12 hours')$$,
    'an interval of exactly the bound passes');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', NULL, '12 hours')$$, '22023',
    'lease must be positive, got <NULL>', 'a NULL interval is refused, naming the argument');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '0', '12 hours')$$, '22023',
    'lease must be positive, got 00:00:00', 'a zero interval is refused');
SELECT throws_ok($$SELECT taskboard.check_interval('retry_in', '-1 second', '12 hours')$$, '22023',
    'retry_in must be positive, got -00:00:01', 'a negative interval is refused');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '12 hours 1 second', '12 hours')$$, '22023',
    'lease must be at most 12 hours, got 12:00:01', 'one second over the bound is refused, the bound in hours');
SELECT throws_ok($$SELECT taskboard.check_interval('retry_in', '2 days', '12 hours')$$, '22023',
    'retry_in must be at most 12 hours, got 2 days', 'days over a bound in hours are refused');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '32 days', '31 days')$$, '22023',
    'lease must be at most 31 days, got 32 days', 'a bound of whole days is written in days');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '2 hours', '1 hour')$$, '22023',
    'lease must be at most 1 hour, got 02:00:00', 'a bound of one unit is written in the singular');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '2 minutes', '90 seconds')$$, '22023',
    'lease must be at most 90 seconds, got 00:02:00', 'a bound of no whole minute is written in seconds');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '1 second', '0.5 seconds')$$, '22023',
    'lease must be at most 00:00:00.5, got 00:00:01', 'a bound under one second is written as its interval');
SELECT throws_ok($$SELECT taskboard.check_interval('lease', '2 seconds', '1.5 seconds')$$, '22023',
    'lease must be at most 00:00:01.5, got 00:00:02', 'a bound of no whole second is written as its interval');

-- By the deadline it gives, months and days as the calendar makes them ----------

SELECT throws_like($$SELECT taskboard.check_interval('lease', '12000 mon -360000 days 11 hours', '12 hours')$$,
    'lease must be at most 12 hours, got %',
    'months that compare as 30 days yet give a deadline years on are refused');
SELECT throws_like($$SELECT taskboard.check_interval('lease', '1 mon -30 days', '12 hours')$$,
    'lease must be %, got %', 'a month less 30 days is judged by its deadline, not as zero');
SELECT throws_like($$SELECT taskboard.check_interval('lease', '300000 years -300000 days', '12 hours')$$,
    'lease must be at most 12 hours, got %', 'a value whose parts would overflow the clock is refused with 22023');
SELECT throws_like($$SELECT taskboard.check_interval('lease', '-300000 years', '12 hours')$$,
    'lease must be positive, got %', 'a huge negative value is refused as not positive');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
