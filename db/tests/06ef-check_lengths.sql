-- check_lengths: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(3);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 2)$$, '42501', NULL, 'an admin cannot call check_lengths');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 2)$$, 'check_lengths(''job_ids'', 2, ''tokens'', 2) passes');
SELECT throws_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 3)$$, '22023', 'job_ids has 2 elements but tokens has 3',
    'check_lengths(''job_ids'', 2, ''tokens'', 3) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
