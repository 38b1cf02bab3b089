-- check_choice: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(4);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'run', 'cancel', 'run')$$, '42501', NULL, 'an admin cannot call check_choice');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'run', 'cancel', 'run')$$, 'check_choice(''on_dependency_failure'', ''run'', ''cancel'', ''run'') passes');
SELECT throws_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'x', 'cancel', 'run')$$, '22023', 'on_dependency_failure must be cancel or run, got ''x''',
    'check_choice(''on_dependency_failure'', ''x'', ''cancel'', ''run'') is refused');
SELECT throws_ok($$SELECT taskboard.check_choice('mode', NULL, 'a', 'b', 'c')$$, '22023', 'mode must be a, b or c, got NULL',
    'check_choice(''mode'', NULL, ''a'', ''b'', ''c'') is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
