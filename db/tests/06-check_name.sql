-- check_name(what, value): one of the argument checks the functions share. It
-- returns for a name of 1 to 200 characters and raises 22023 naming the
-- argument otherwise, with the messages the public functions' tests assert.
-- Internal: the application roles cannot call it, the owner's functions do.

BEGIN;
SELECT plan(7);

-- Who may: the owner only; its functions call it ---------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_name('queue', 'q')$$, '42501', NULL,
    'an admin cannot call check_name');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

SELECT lives_ok($$SELECT taskboard.check_name('queue', 'q')$$, 'a one-character name passes');
SELECT lives_ok($$SELECT taskboard.check_name('queue', repeat('q', 200))$$, 'a name of 200 characters passes');
SELECT lives_ok($$SELECT taskboard.check_name('queue', repeat('é', 200))$$,
    'the length is counted in characters, not bytes');
SELECT throws_ok($$SELECT taskboard.check_name('queue', NULL)$$, '22023', 'queue must not be NULL or empty',
    'a NULL name is refused, naming the argument');
SELECT throws_ok($$SELECT taskboard.check_name('task', '')$$, '22023', 'task must not be NULL or empty',
    'an empty name is refused, naming the argument');
SELECT throws_ok($$SELECT taskboard.check_name('worker', repeat('w', 201))$$, '22023',
    'worker must be at most 200 characters, got 201', 'a name of 201 characters is refused with its length');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
