-- check_between: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(6);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_between('batch', 5, 1, 1000)$$, '42501', NULL, 'an admin cannot call check_between');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_between('batch', 5, 1, 1000)$$, 'check_between(''batch'', 5, 1, 1000) passes');
SELECT throws_ok($$SELECT taskboard.check_between('batch', 0, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got 0',
    'check_between(''batch'', 0, 1, 1000) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('batch', 1001, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got 1001',
    'check_between(''batch'', 1001, 1, 1000) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('priority', -5, 0)$$, '22023', 'priority must be at least 0, got -5',
    'check_between(''priority'', -5, 0) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('batch', NULL, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got NULL',
    'check_between(''batch'', NULL, 1, 1000) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
