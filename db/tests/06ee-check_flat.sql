-- check_flat: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(3);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 1)$$, '42501', NULL, 'an admin cannot call check_flat');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 1)$$, 'check_flat(''job_ids and tokens'', 1, 1) passes');
SELECT throws_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 2)$$, '22023', 'job_ids and tokens must be one-dimensional arrays',
    'check_flat(''job_ids and tokens'', 1, 2) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
