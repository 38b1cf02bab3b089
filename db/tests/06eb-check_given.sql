-- check_given: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(4);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_given('queue', 'q'::text)$$, '42501', NULL, 'an admin cannot call check_given');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_given('queue', 'q'::text)$$, 'check_given(''queue'', ''q''::text) passes');
SELECT throws_ok($$SELECT taskboard.check_given('queue', NULL::text)$$, '22023', 'queue must not be NULL',
    'check_given(''queue'', NULL::text) is refused');
SELECT throws_ok($$SELECT taskboard.check_given('lease', NULL::interval, 'give a lease')$$, '22023', 'lease must not be NULL (give a lease)',
    'check_given(''lease'', NULL::interval, ''give a lease'') is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
