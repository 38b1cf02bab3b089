-- bury_spent(queue, clock): claim's picker that takes nothing, called
-- directly. The running jobs of the queue whose lease expired by `clock`
-- with no attempt left become dead (finished_at = clock, an error 'lease
-- expired' with their attempt and worker) and the jobs waiting on them are
-- settled; an expired lease with an attempt left, a live lease and another
-- queue's jobs are left as they are, and no lease is written. Internal: the
-- application roles cannot call it; claim does (20-claim, 26-dependencies).

BEGIN;
SELECT plan(12);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.bury_spent('bs', now())$$, '42501', NULL,
    'an admin cannot call bury_spent');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.bury_spent('bs', now())$$, '42501', NULL,
    'a worker cannot call bury_spent');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Spent and expired; expired with an attempt left; spent but live for half
-- an hour; spent and expired in another queue. All on their second attempt.
SELECT taskboard.enqueue(task => 't', queue => 'bs', max_attempts => 2) AS spent \gset
SELECT taskboard.enqueue(task => 't', queue => 'bs', max_attempts => 5) AS unspent \gset
SELECT taskboard.enqueue(task => 't', queue => 'bs', max_attempts => 2) AS live \gset
SELECT taskboard.enqueue(task => 't', queue => 'bs-other', max_attempts => 2) AS other \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 2, fence = 2, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '10 minutes',
       lease_expires_at = CASE WHEN id = :live THEN now() + interval '30 minutes'
                               ELSE now() - interval '1 second' END
 WHERE id IN (:spent, :unspent, :live, :other);
-- A job waiting on the spent one.
SELECT taskboard.enqueue(task => 't', queue => 'bs-dep', depends_on => ARRAY[:spent]::bigint[]) AS dependent \gset

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue IN ('bs', 'bs-other');

SELECT lives_ok(format($$SELECT taskboard.bury_spent('bs', %L::timestamptz)$$, now()),
    'bury_spent runs on the queue by the clock given');

-- The spent lease is buried ---------------------------------------------------------------

SELECT is((SELECT (state, finished_at) FROM taskboard.jobs WHERE id = :spent), ('dead'::text, now()),
    'the expired lease with no attempt left is dead, finished at the clock given');
SELECT is((SELECT errors FROM taskboard.jobs WHERE id = :spent),
          jsonb_build_array(jsonb_build_object('error', 'lease expired', 'attempt', 2, 'worker', 'w-old', 'at', now())),
    'its errors gain one entry: lease expired, with its attempt, its worker and the clock');
SELECT is((SELECT (j.attempt, j.fence, j.lease_token, j.claimed_by) FROM taskboard.jobs AS j WHERE j.id = :spent),
          (SELECT (b.attempt, b.fence, b.lease_token, b.claimed_by) FROM before AS b WHERE b.id = :spent),
    'no lease is written: the buried job keeps its attempt, fence, token and holder');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :dependent), 'cancelled',
    'the job waiting on it is settled in the same transaction: cancelled');

-- What is left ---------------------------------------------------------------------------

SELECT is((SELECT count(*) FROM (SELECT * FROM before WHERE id <> :spent
                                 EXCEPT SELECT * FROM taskboard.jobs) AS d), 0::bigint,
    'the expired lease with an attempt left, the live spent lease and another queue''s spent lease are untouched');
SELECT is((SELECT (state, attempt, lease_expires_at < now()) FROM taskboard.jobs WHERE id = :unspent),
          ('running'::text, 2, true),
    'the expired lease with an attempt left is still running, on its attempt, for a reclaim');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :live), 'running',
    'the spent lease that has not expired by the clock is still running');

-- Again, and later --------------------------------------------------------------------------

SELECT taskboard.bury_spent('bs', now() + interval '1 minute') IS NULL AS again \gset
SELECT is((SELECT jsonb_array_length(errors) FROM taskboard.jobs WHERE id = :spent), 1,
    'a second call leaves the dead job as it was: one error entry');
SELECT taskboard.bury_spent('bs', now() + interval '1 hour') IS NULL AS later \gset
SELECT is((SELECT (state, finished_at) FROM taskboard.jobs WHERE id = :live), ('dead'::text, now() + interval '1 hour'),
    'by a clock past its deadline, the spent lease that was live is buried too');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
