-- queue_room(queue, max_running, clock): the bound of claim's pickers under
-- a queue limit, called directly. How many more jobs of the queue may start
-- by `clock`, at least 0: the limit less its running jobs (an expired lease
-- counts; one with no attempt left does not, claim buries it) and less the
-- places still held (a job cancelled under a live lease, or retried since
-- and not yet due). It writes nothing. Internal: the application roles
-- cannot call it; claim does (89-set_queue_limit, 72-cancel_holds).

BEGIN;
SELECT plan(10);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.queue_room('qr', 10, now())$$, '42501', NULL,
    'an admin cannot call queue_room');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.queue_room('qr', 10, now())$$, '42501', NULL,
    'a worker cannot call queue_room');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Running: a live lease (an hour left), an expired one with an attempt
-- left, an expired one with none; another queue's running job.
SELECT taskboard.enqueue(task => 't', queue => 'qr', max_attempts => 5) AS live \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr', max_attempts => 5) AS expired \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr', max_attempts => 1) AS spent \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr-other', max_attempts => 5) AS other \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '10 minutes',
       lease_expires_at = CASE WHEN id IN (:live, :other) THEN now() + interval '1 hour'
                               ELSE now() - interval '1 second' END
 WHERE id IN (:live, :expired, :spent, :other);
-- Held: cancelled under a lease with an hour left; retried since and due
-- in an hour. Not held: cancelled under a lease that has ended; queued.
SELECT taskboard.enqueue(task => 't', queue => 'qr') AS held \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr') AS retried \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr') AS ended \gset
SELECT taskboard.enqueue(task => 't', queue => 'qr') AS queued \gset
UPDATE taskboard.jobs
   SET state = 'cancelled', finished_at = now(),
       held_until = CASE WHEN id = :held THEN now() + interval '1 hour' ELSE now() - interval '1 second' END
 WHERE id IN (:held, :ended);
UPDATE taskboard.jobs SET held_until = now() + interval '1 hour', run_at = now() + interval '1 hour'
 WHERE id = :retried;

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue = 'qr';

-- How it counts ----------------------------------------------------------------------------

SELECT is(taskboard.queue_room('qr', 10, now()), 6,
    'a limit of 10 less 4: the live and the expired lease, the cancelled and the retried job held');
SELECT is(taskboard.queue_room('qr', 4, now()), 0,
    'a limit of 4 has no room left');
SELECT is(taskboard.queue_room('qr', 2, now()), 0,
    'over the limit the room is 0, never less');
SELECT is(taskboard.queue_room('qr-empty', 3, now()), 3,
    'a queue with nothing running or held has the whole limit');
SELECT is(taskboard.queue_room('qr', 10, now() + interval '2 hours'), 8,
    'two hours on the held places have ended; the running jobs, their leases expired with an attempt left, still count');

UPDATE taskboard.jobs SET max_attempts = 2 WHERE id = :spent;
SELECT is(taskboard.queue_room('qr', 10, now()), 5,
    'given an attempt left, the expired lease that had none counts too');
UPDATE taskboard.jobs SET max_attempts = 1 WHERE id = :spent;

SELECT is(taskboard.queue_room('qr', 10, now() - interval '1 hour'), 4,
    'an hour back every lease was live and every cancel held: the spent lease and the ended cancel counted too');

-- Nothing written ----------------------------------------------------------------------------

SELECT is((SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM taskboard.jobs WHERE queue = 'qr') AS d),
          0::bigint,
    'queue_room leaves every job of the queue as it was');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
