-- check_recent: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(5);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_recent('1 hour')$$, '42501', NULL, 'an admin cannot call check_recent');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_recent('1 hour')$$, 'check_recent(''1 hour'') passes');
SELECT throws_ok($$SELECT taskboard.check_recent('0')$$, '22023', 'recent must be positive and at most 31 days, got 00:00:00',
    'check_recent(''0'') is refused');
SELECT throws_ok($$SELECT taskboard.check_recent('32 days')$$, '22023', 'recent must be positive and at most 31 days, got 32 days',
    'check_recent(''32 days'') is refused');
SELECT throws_ok($$SELECT taskboard.check_recent(NULL)$$, '22023', 'recent must be positive and at most 31 days, got NULL',
    'check_recent(NULL) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
