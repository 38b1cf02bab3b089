-- check_leases: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(6);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()])$$, '42501', NULL, 'an admin cannot call check_leases');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()])$$, 'check_leases(''job_ids and tokens'', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()]) passes');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1,2]::bigint[], ARRAY[gen_random_uuid()])$$, '22023', 'job_ids has 2 elements but tokens has 1',
    'check_leases(''job_ids and tokens'', ARRAY[1,2]::bigint[], ARRAY[gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', NULL, ARRAY[gen_random_uuid()])$$, '22023', 'job_ids must not be NULL',
    'check_leases(''job_ids and tokens'', NULL, ARRAY[gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1,NULL]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()])$$, '22023', 'job_ids must not contain NULL',
    'check_leases(''job_ids and tokens'', ARRAY[1,NULL]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids, tokens and results', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()], 2)$$, '22023', 'job_ids, tokens and results must be one-dimensional arrays',
    'check_leases(''job_ids, tokens and results'', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()], 2) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
