-- check_limit: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(4);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_limit('max_running', 3, 10000, 'no limit')$$, '42501', NULL, 'an admin cannot call check_limit');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_limit('max_running', 3, 10000, 'no limit')$$, 'check_limit(''max_running'', 3, 10000, ''no limit'') passes');
SELECT throws_ok($$SELECT taskboard.check_limit('max_running', 0, 10000, 'no limit')$$, '22023', 'max_running must be between 1 and 10000 or NULL (no limit), got 0; pause the queue to stop it',
    'check_limit(''max_running'', 0, 10000, ''no limit'') is refused');
SELECT lives_ok($$SELECT taskboard.check_limit('max_running', NULL, 10000, 'no limit')$$, 'check_limit(''max_running'', NULL, 10000, ''no limit'') passes');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
