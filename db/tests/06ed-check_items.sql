-- check_items: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(3);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,2]::bigint[])$$, '42501', NULL, 'an admin cannot call check_items');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,2]::bigint[])$$, 'check_items(''job_ids'', ARRAY[1,2]::bigint[]) passes');
SELECT throws_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,NULL]::bigint[])$$, '22023', 'job_ids must not contain NULL',
    'check_items(''job_ids'', ARRAY[1,NULL]::bigint[]) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
