-- check_key: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(5);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', 'k', 10, 'NULL means none')$$, '42501', NULL, 'an admin cannot call check_key');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_key('dedupe_key', 'k', 10, 'NULL means none')$$, 'check_key(''dedupe_key'', ''k'', 10, ''NULL means none'') passes');
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', '', 10, 'NULL means none')$$, '22023', 'dedupe_key must not be empty (NULL means none)',
    'check_key(''dedupe_key'', '''', 10, ''NULL means none'') is refused');
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', repeat('k', 11), 10, 'NULL means none')$$, '22023', 'dedupe_key must be at most 10 characters, got 11',
    'check_key(''dedupe_key'', repeat(''k'', 11), 10, ''NULL means none'') is refused');
SELECT lives_ok($$SELECT taskboard.check_key('dedupe_key', NULL, 10, 'NULL means none')$$, 'check_key(''dedupe_key'', NULL, 10, ''NULL means none'') passes');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
