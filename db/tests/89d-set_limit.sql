-- set_limit(queue, what, value): the shared writer of set_queue_limit
-- ('max_running') and set_key_limit ('max_running_per_key'), called
-- directly. It writes the named column of the queue's row (made when it has
-- none) and leaves the other; a limit given first takes the queue's claim
-- lock (1952605797, hashtext(queue)) exclusively, even when it changes
-- nothing. True when the limit changed, false when it already was `value`;
-- a NULL, empty or too long queue and a value below 1 raise 22023.
-- Internal: the application roles cannot call it; set_queue_limit and
-- set_key_limit do (89-set_queue_limit, 89b-set_key_limit).

BEGIN;
SELECT plan(17);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.set_limit('sl', 'max_running', 3)$$, '42501', NULL,
    'an admin cannot call set_limit (only set_queue_limit and set_key_limit)');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.set_limit('sl', 'max_running', 3)$$, '42501', NULL,
    'a worker cannot call set_limit');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- What it writes ----------------------------------------------------------------------------

SELECT is(taskboard.set_limit('sl', 'max_running', 3), true,
    'a first queue limit answers true');
SELECT is((SELECT (max_running, max_running_per_key, paused) FROM taskboard.queues WHERE queue = 'sl'),
          (3, NULL::integer, false),
    'the queue''s row is made, with max_running and no key limit, unpaused');
SELECT is(taskboard.set_limit('sl', 'max_running_per_key', 2), true,
    'a first key limit answers true');
SELECT is((SELECT (max_running, max_running_per_key) FROM taskboard.queues WHERE queue = 'sl'), (3, 2),
    'max_running_per_key is written and max_running left as it was');
SELECT is(taskboard.set_limit('sl', 'max_running', NULL), true,
    'NULL removes the queue limit: true');
SELECT is((SELECT (max_running, max_running_per_key) FROM taskboard.queues WHERE queue = 'sl'),
          (NULL::integer, 2),
    'max_running is NULL again; the key limit stays');

-- The same limit again, and the claim lock --------------------------------------------------------

INSERT INTO taskboard.queues (queue, max_running, updated_at)
VALUES ('sl-lock', 4, now() - interval '1 day'),
       ('sl-free', NULL, now() - interval '1 day');
UPDATE taskboard.queues SET max_running_per_key = 5 WHERE queue = 'sl-free';

SELECT is(taskboard.set_limit('sl-lock', 'max_running', 4), false,
    'a limit that already was `value` answers false');
SELECT is((SELECT updated_at FROM taskboard.queues WHERE queue = 'sl-lock'), now() - interval '1 day',
    'and leaves the row as it was');
SELECT is((SELECT mode FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
              AND classid = 1952605797 AND objid = hashtext('sl-lock')::oid AND objsubid = 2),
          'ExclusiveLock',
    'a limit given takes the queue''s claim lock exclusively, even when it changes nothing');
SELECT is(taskboard.set_limit('sl-free', 'max_running_per_key', NULL), true,
    'NULL removes a key limit: true');
SELECT is((SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid()
              AND classid = 1952605797 AND objid = hashtext('sl-free')::oid AND objsubid = 2),
          0::bigint,
    'a removal takes no claim lock on the queue');

SELECT is(taskboard.set_limit('sl-never', 'max_running', NULL), false,
    'NULL for a queue that never had a limit changes nothing: false');
SELECT is((SELECT count(*) FROM taskboard.queues WHERE queue = 'sl-never'), 0::bigint,
    'and writes no row for it');

-- Refusals ----------------------------------------------------------------------------------------

SELECT throws_ok($$SELECT taskboard.set_limit(NULL, 'max_running', 3)$$, '22023',
    'queue must not be NULL or empty', 'a NULL queue is refused');
SELECT throws_ok($$SELECT taskboard.set_limit('sl', 'max_running_per_key', 0)$$, '22023',
    'max_running_per_key must be at least 1 or NULL (no key limit), got 0; pause the queue to stop it',
    'a key limit of 0 is refused, naming pause');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
