-- check_arg: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(4);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_arg(true, 'never')$$, '42501', NULL, 'an admin cannot call check_arg');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_arg(true, 'never')$$, 'check_arg(true, ''never'') passes');
SELECT throws_ok($$SELECT taskboard.check_arg(false, 'x must be y')$$, '22023', 'x must be y',
    'check_arg(false, ''x must be y'') is refused');
SELECT throws_ok($$SELECT taskboard.check_arg(NULL, 'a NULL rule fails')$$, '22023', 'a NULL rule fails',
    'check_arg(NULL, ''a NULL rule fails'') is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
