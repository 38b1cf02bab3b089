-- grant_leases(ids, most, worker, lease, clock) and pick_queued(queue, clock,
-- most): the one grant of a lease and claim's plain picker, called directly.
-- The picker returns the ids of runnable jobs in claim order and writes
-- nothing; the grant gives a fresh lease to the first `most` of them, and a
-- reclaim of an expired lease bumps attempt and fence and leaves a history
-- line naming the old holder and the new one. Internal: the application
-- roles cannot call either; claim does (20-claim and 22-claim_paths test it).

BEGIN;
SELECT plan(13);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pick_queued('g', now(), 1)$$, '42501', NULL,
    'an admin cannot call pick_queued');
SELECT throws_ok($$SELECT * FROM taskboard.grant_leases(ARRAY[1]::bigint[], 1, 'w', '30 seconds', now())$$,
    '42501', NULL, 'an admin cannot call grant_leases');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

CREATE TEMP TABLE ids AS
SELECT taskboard.enqueue(task => 'low', queue => 'g', priority => 0) AS low,
       taskboard.enqueue(task => 'high', queue => 'g', priority => 5) AS high,
       taskboard.enqueue(task => 'mid', queue => 'g', priority => 1) AS mid,
       taskboard.enqueue(task => 'later', queue => 'g', priority => 9,
                         run_at => now() + interval '1 hour') AS later;

-- The picker: claim order, only what may run now, nothing written ---------------------

SELECT is(taskboard.pick_queued('g', clock_timestamp(), 2), ARRAY[(SELECT high FROM ids), (SELECT mid FROM ids)],
    'pick_queued gives the runnable jobs of the queue, highest priority first, at most `most`');
SELECT is(taskboard.pick_queued('other', clock_timestamp(), 2), '{}'::bigint[],
    'pick_queued of a queue without jobs is empty');
SELECT is((SELECT count(*) FROM taskboard.jobs WHERE queue = 'g' AND state = 'queued'), 4::bigint,
    'pick_queued leaves every job queued');

-- The grant: the first `most` of the ids, a fresh lease each ----------------------------

CREATE TEMP TABLE granted AS
SELECT * FROM taskboard.grant_leases(ARRAY[(SELECT mid FROM ids), (SELECT high FROM ids), (SELECT low FROM ids)],
                                     2, 'w1', interval '30 seconds', clock_timestamp());

SELECT is((SELECT array_agg(job_id ORDER BY job_id) FROM granted),
          ARRAY[(SELECT high FROM ids), (SELECT mid FROM ids)],
    'grant_leases takes the first `most` of the ids in claim order');
SELECT is((SELECT count(*) FROM taskboard.jobs j JOIN granted g ON g.job_id = j.id
            WHERE j.state = 'running' AND j.lease_token = g.token AND j.claimed_by = 'w1'
              AND j.attempt = 1 AND j.fence = 1 AND j.lease_expires_at = j.started_at + interval '30 seconds'),
          2::bigint,
    'each granted job is running under the returned token, attempt 1, fence 1, lease from its start');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = (SELECT low FROM ids)), 'queued',
    'a job beyond `most` stays queued');
SELECT is((SELECT count(*) FROM granted WHERE waited >= interval '0'), 2::bigint,
    'each grant says how long its job waited since run_at');
-- A reclaim: attempt and fence go up, the old holder is in the history ----------------------

UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id = (SELECT high FROM ids);
CREATE TEMP TABLE reclaimed AS
SELECT * FROM taskboard.grant_leases(ARRAY[(SELECT high FROM ids)], 1, 'w2', interval '30 seconds',
                                     clock_timestamp());

SELECT is((SELECT (attempt, fence) FROM reclaimed), (2, 2::bigint),
    'a reclaim gives the next attempt and fence');
SELECT isnt((SELECT token FROM reclaimed), (SELECT token FROM granted WHERE job_id = (SELECT high FROM ids)),
    'a reclaim hands out a new token');
SELECT is((SELECT count(*) FROM taskboard.job_events
            WHERE job_id = (SELECT high FROM ids) AND kind = 'reclaimed'),
          1::bigint,
    'the grant of a running job writes one reclaimed line; the first grant none');
SELECT is((SELECT (worker, actor_worker, attempt, fence) FROM taskboard.job_events
            WHERE job_id = (SELECT high FROM ids) AND kind = 'reclaimed' ORDER BY id DESC LIMIT 1),
          ('w1'::text, 'w2'::text, 1, 1::bigint),
    'the reclaimed line names the lease it took over and the worker that took it');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
