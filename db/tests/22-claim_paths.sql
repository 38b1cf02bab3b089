-- claim's two paths give the same answers. A queue with no limit and no
-- lease expired by the claim's clock takes the common path (queued jobs
-- only, nothing recorded in the history); an expired lease, or a limit,
-- takes the full statement. Either way: priority order, due jobs only, live
-- leases untouched, fresh tokens and fences, and an expired lease of lower
-- priority waits behind a queued job of higher priority.
--
-- A lease expires by moving its deadline into the past as taskboard_owner.

BEGIN;
SELECT plan(12);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 't', queue => 'paths', priority => 1) AS low_id \gset
SELECT taskboard.enqueue(task => 't', queue => 'paths', priority => 5) AS high_id \gset
SELECT taskboard.enqueue(task => 't', queue => 'paths', priority => 9,
                         run_at => clock_timestamp() + interval '1 hour') AS later_id \gset
SELECT taskboard.enqueue(task => 't', queue => 'paths', priority => 3) AS held_id \gset
RESET ROLE;

-- One job running under a live lease: nothing expired, the common path.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET priority = 10 WHERE id = :held_id;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS got_held FROM taskboard.claim(queue => 'paths', worker => 'w-held') \gset
RESET ROLE;
SELECT is(:got_held::bigint, :held_id::bigint, 'the highest priority due job is claimed first');

SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE common ON COMMIT DROP AS
SELECT * FROM taskboard.claim(queue => 'paths', worker => 'w-common', batch => 5);
RESET ROLE;

SELECT results_eq(
    $$SELECT job_id FROM common$$,
    format($$VALUES (%s::bigint), (%s::bigint)$$, :high_id, :low_id),
    'beside a live lease, claim returns the due queued jobs in priority order, not the one due later'
);
SELECT is(
    (SELECT pg_catalog.count(*) FROM common AS c
       JOIN taskboard.jobs AS j ON j.id = c.job_id
      WHERE j.state = 'running' AND j.lease_token = c.token AND j.claimed_by = 'w-common'
        AND j.attempt = 1 AND j.fence = 1 AND c.fence = 1 AND c.waited >= interval '0'),
    2::bigint,
    'each is running with its returned token, attempt 1, fence 1 and a waited time'
);
SELECT is(
    (SELECT row(claimed_by, attempt, fence)::text FROM taskboard.jobs WHERE id = :held_id),
    row('w-held', 1, 1::bigint)::text,
    'the job under a live lease is left to its holder'
);
SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.job_events WHERE job_id IN (:low_id, :high_id, :held_id)),
    0::bigint,
    'a claim of queued jobs records nothing in the history'
);
SELECT is(
    (SELECT state FROM taskboard.jobs WHERE id = :later_id),
    'queued',
    'a job due later stays queued'
);

-- An expired lease of lower priority than a queued job: the full statement.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 't', queue => 'paths', priority => 7) AS next_id \gset
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second', priority = 2
 WHERE id = :held_id;
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS got_first FROM taskboard.claim(queue => 'paths', worker => 'w-full') \gset
RESET ROLE;
SELECT is(:got_first::bigint, :next_id::bigint,
    'with an expired lease in the queue, a queued job of higher priority is still taken first');
SELECT is(
    (SELECT claimed_by FROM taskboard.jobs WHERE id = :held_id),
    'w-held',
    'the expired lease of lower priority waits for the next claim'
);

SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE reclaimed ON COMMIT DROP AS
SELECT * FROM taskboard.claim(queue => 'paths', worker => 'w-full', batch => 5);
RESET ROLE;
SELECT results_eq(
    $$SELECT job_id, attempt, fence FROM reclaimed$$,
    format($$VALUES (%s::bigint, 2, 2::bigint)$$, :held_id),
    'the next claim reclaims the expired lease: attempt 2, fence 2'
);
SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.job_events
      WHERE job_id = :held_id AND kind = 'reclaimed' AND worker = 'w-held'),
    1::bigint,
    'the reclaim is recorded in the history'
);

-- Once nothing is expired again, the common path hands out what comes next.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 't', queue => 'paths') AS last_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS got_last FROM taskboard.claim(queue => 'paths', worker => 'w-common') \gset
RESET ROLE;
SELECT is(:got_last::bigint, :last_id::bigint, 'after the reclaim, claim takes the new queued job');
SELECT is(
    (SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'paths' AND state = 'queued'),
    1::bigint,
    'only the job due later is left queued'
);

SELECT * FROM finish();
ROLLBACK;
