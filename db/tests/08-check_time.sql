-- check_time(what, value): one of the argument checks the functions share. It
-- returns for a time inside the years 1 to 9999 and raises 22023 naming the
-- argument otherwise. Internal: the application roles cannot call it, the
-- owner's functions do.

BEGIN;
SELECT plan(7);

-- Who may: the owner only; its functions call it ---------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_time('run_at', now())$$, '42501', NULL,
    'an admin cannot call check_time');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

SELECT lives_ok($$SELECT taskboard.check_time('run_at', '0001-01-01 00:00:00+00')$$,
    'the first instant of the year 1 passes');
SELECT lives_ok($$SELECT taskboard.check_time('run_at', '9999-12-31 23:59:59.999999+00')$$,
    'the last instant of the year 9999 passes');
SELECT throws_like($$SELECT taskboard.check_time('run_at', '0001-01-01 00:00:00+00'::timestamptz - interval '1 microsecond')$$,
    'run_at must be between 0001-01-01 and 9999-12-31, got %', 'a time before the year 1 is refused');
SELECT throws_like($$SELECT taskboard.check_time('slot', '10000-01-01 00:00:00+00')$$,
    'slot must be between 0001-01-01 and 9999-12-31, got %', 'a time in the year 10000 is refused');
SELECT throws_ok($$SELECT taskboard.check_time('run_at', 'infinity')$$, '22023',
    'run_at must be between 0001-01-01 and 9999-12-31, got infinity', 'infinity is refused');
SELECT throws_ok($$SELECT taskboard.check_time('run_at', NULL)$$, '22023',
    'run_at must be between 0001-01-01 and 9999-12-31, got <NULL>', 'NULL is refused');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
