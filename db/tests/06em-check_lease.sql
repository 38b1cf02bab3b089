-- check_lease: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(4);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_lease(1, gen_random_uuid())$$, '42501', NULL, 'an admin cannot call check_lease');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_lease(1, gen_random_uuid())$$, 'check_lease(1, gen_random_uuid()) passes');
SELECT throws_ok($$SELECT taskboard.check_lease(NULL, gen_random_uuid())$$, '22023', 'job_id must not be NULL',
    'check_lease(NULL, gen_random_uuid()) is refused');
SELECT throws_ok($$SELECT taskboard.check_lease(1, NULL)$$, '22023', 'token must not be NULL',
    'check_lease(1, NULL) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
