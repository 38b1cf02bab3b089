-- check_delay: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(6);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '1 hour', '1 year')$$, '42501', NULL, 'an admin cannot call check_delay');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_delay('delay', '1 hour', '1 year')$$, 'check_delay(''delay'', ''1 hour'', ''1 year'') passes');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '-1 second', '1 year')$$, '22023', 'delay must not be NULL or negative, got -00:00:01',
    'check_delay(''delay'', ''-1 second'', ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', NULL, '1 year')$$, '22023', 'delay must not be NULL or negative, got <NULL>',
    'check_delay(''delay'', NULL, ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '2 years', '1 year')$$, '22023', 'delay must be at most 1 year, got 2 years',
    'check_delay(''delay'', ''2 years'', ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('older_than', '2 years', '1 year', true)$$, '22023', 'older_than must be at most 1 year, got 2 years',
    'check_delay(''older_than'', ''2 years'', ''1 year'', true) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
