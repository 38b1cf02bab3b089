-- window_room(queue, rate_starts, rate_per, clock): the bound of claim's
-- pickers under a rate limit of the whole queue, called directly. How many
-- more starts the window of rate_per ending at `clock` has room for, at
-- least 0: rate_starts less the starts of the queue (of any key or none)
-- logged in taskboard.queue_starts after clock - rate_per. It writes
-- nothing. Internal: the application roles cannot call it; claim does
-- (24-claim_rate_limit).

BEGIN;
SELECT plan(10);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.window_room('wr', 10, interval '1 hour', now())$$, '42501', NULL,
    'an admin cannot call window_room');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.window_room('wr', 10, interval '1 hour', now())$$, '42501', NULL,
    'a worker cannot call window_room');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Four starts of the queue, 10 seconds, 5 minutes, 30 minutes and 2 hours
-- before now, of keys and of none; three of another queue just now.
INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)
VALUES ('wr', NULL, now() - interval '10 seconds'),
       ('wr', 'a', now() - interval '5 minutes'),
       ('wr', 'b', now() - interval '30 minutes'),
       ('wr', NULL, now() - interval '2 hours'),
       ('wr-other', NULL, now() - interval '1 second'),
       ('wr-other', NULL, now() - interval '1 second'),
       ('wr-other', 'a', now() - interval '1 second');

SELECT is(taskboard.window_room('wr', 10, interval '1 hour', now()), 7,
    '10 an hour less the 3 starts of the queue within the hour, with a key or without');
SELECT is(taskboard.window_room('wr', 2, interval '1 hour', now()), 0,
    'a window already past its starts has room 0, never less');
SELECT is(taskboard.window_room('wr', 10, interval '1 minute', now()), 9,
    'a window of a minute counts the one start within it');
SELECT is(taskboard.window_room('wr', 10, interval '3 hours', now()), 6,
    'a window of three hours counts all four');
SELECT is(taskboard.window_room('wr', 10, interval '5 minutes', now()), 9,
    'a start exactly at clock - rate_per is outside the window');
SELECT is(taskboard.window_room('wr', 10, interval '1 hour', now() + interval '1 hour'), 10,
    'a window ending an hour later holds none of them');
SELECT is(taskboard.window_room('wr-empty', 4, interval '1 hour', now()), 4,
    'a queue without starts has room for rate_starts');

SELECT is((SELECT count(*) FROM taskboard.queue_starts WHERE queue IN ('wr', 'wr-other')), 7::bigint,
    'window_room deletes no start, not even those older than the window');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
