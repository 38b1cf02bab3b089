-- claim(queue, worker, batch, lease): takes up to `batch` runnable jobs of
-- the queue (queued and due, or running with an expired lease) in order of
-- priority (higher first), run_at, then id. Each gets a fresh token,
-- lease_expires_at = clock + lease, attempt + 1 and claimed_by = worker. An
-- expired job out of attempts becomes dead ('lease expired') in the same
-- call, is not returned and does not use up the batch. Bad input raises
-- 22023 and changes nothing.
--
-- Producers enqueue, workers claim, an admin cancels. A lease expires by
-- moving its deadline into the past as taskboard_owner. The table is read
-- as the session user.

BEGIN;
SELECT plan(59);

-- Defaults: one job, a 60-second lease ---------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email', payload => '{"to": "maya"}', queue => 'claim-defaults') AS first_id \gset
SELECT taskboard.enqueue(task => 'send_email', payload => '{"to": "ravi"}', queue => 'claim-defaults') AS second_id \gset
RESET ROLE;

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE claimed_default ON COMMIT DROP AS
SELECT * FROM taskboard.claim(queue => 'claim-defaults', worker => 'worker-a');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is((SELECT pg_catalog.count(*) FROM claimed_default), 1::bigint,
    'by default claim takes one job, though two are runnable');

SELECT results_eq(
    $$SELECT job_id, task, payload, attempt FROM claimed_default$$,
    format($$VALUES (%s::bigint, 'send_email'::text, '{"to": "maya"}'::jsonb, 1)$$, :first_id),
    'claim returns the earliest job with its task, its payload and attempt 1'
);

SELECT ok(
    (SELECT c.lease_expires_at BETWEEN :'t0'::timestamptz + interval '60 seconds'
                                   AND :'t1'::timestamptz + interval '60 seconds'
       FROM claimed_default AS c),
    'the default lease runs 60 seconds from the server clock at the call'
);

SELECT results_eq(
    $$SELECT j.state, j.lease_token, j.lease_expires_at, j.claimed_by, j.attempt, j.idempotency_key
        FROM taskboard.jobs AS j
        JOIN claimed_default AS c ON c.job_id = j.id$$,
    $$SELECT 'running'::text, c.token, c.lease_expires_at, 'worker-a'::text, 1, c.idempotency_key
        FROM claimed_default AS c$$,
    'the claimed job is running with the returned token, deadline and idempotency key, claimed by the worker'
);

SELECT isnt((SELECT token FROM claimed_default), NULL, 'claim hands the worker a token');

SELECT is(
    (SELECT row(state, attempt, lease_token)::text FROM taskboard.jobs WHERE id = :second_id),
    row('queued', 0, NULL::uuid)::text,
    'the job left out of the batch is untouched'
);

-- A batch, a custom lease, and the end of the runnable jobs ------------------

SET LOCAL ROLE taskboard_producer;
SELECT pg_catalog.count(*) AS batch_jobs
  FROM taskboard.enqueue_many(task => 'resize', payloads => ARRAY['{}', '{}', '{}']::jsonb[], queue => 'claim-batch') \gset
RESET ROLE;

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE claimed_batch ON COMMIT DROP AS
SELECT * FROM taskboard.claim(queue => 'claim-batch', worker => 'worker-a', batch => 5, lease => '5 minutes');
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is((SELECT pg_catalog.count(*) FROM claimed_batch), 3::bigint,
    'a batch of 5 over 3 runnable jobs returns 3: fewer rows than batch means nothing else is runnable');

SELECT is((SELECT pg_catalog.count(DISTINCT token) FROM claimed_batch), 3::bigint,
    'each claimed job gets its own token');

SELECT ok(
    (SELECT pg_catalog.bool_and(c.lease_expires_at BETWEEN :'t0'::timestamptz + interval '5 minutes'
                                                      AND :'t1'::timestamptz + interval '5 minutes')
       FROM claimed_batch AS c),
    'the lease argument sets the deadline to clock + lease'
);

SET LOCAL ROLE taskboard_worker;
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-batch', worker => 'worker-b', batch => 5)$$,
    'a running job whose lease is live is not claimable'
);
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-nothing', worker => 'worker-b', batch => 5)$$,
    'claim takes nothing from other queues, though they hold runnable jobs'
);
RESET ROLE;

-- Order: priority (higher first), then run_at, then id -----------------------

SELECT clock_timestamp() - interval '10 minutes' AS base \gset
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'o', queue => 'claim-order', priority => 0,  run_at => :'base')                           AS low_a \gset
SELECT taskboard.enqueue(task => 'o', queue => 'claim-order', priority => 5,  run_at => :'base'::timestamptz + interval '2 minutes') AS high_late \gset
SELECT taskboard.enqueue(task => 'o', queue => 'claim-order', priority => -1, run_at => :'base'::timestamptz - interval '5 minutes') AS negative \gset
SELECT taskboard.enqueue(task => 'o', queue => 'claim-order', priority => 5,  run_at => :'base'::timestamptz + interval '1 minute')  AS high_early \gset
SELECT taskboard.enqueue(task => 'o', queue => 'claim-order', priority => 0,  run_at => :'base')                           AS low_b \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-order', worker => 'worker-a', batch => 2)$$,
    format($$VALUES (%s::bigint), (%s)$$, :high_early, :high_late),
    'claim takes the highest priority first, and within a priority the earliest run_at'
);
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-order', worker => 'worker-a', batch => 10)$$,
    format($$VALUES (%s::bigint), (%s), (%s)$$, :low_a, :low_b, :negative),
    'equal priority and run_at go by id, and a lower priority waits however old its run_at'
);
RESET ROLE;

-- Scheduled jobs -------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'later', queue => 'claim-scheduled',
                         run_at => clock_timestamp() + interval '1 hour') AS scheduled_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-scheduled', worker => 'worker-a', batch => 10)$$,
    'a job whose run_at is in the future is not claimable'
);
RESET ROLE;

SELECT is(
    (SELECT row(state, attempt)::text FROM taskboard.jobs WHERE id = :scheduled_id),
    row('queued', 0)::text,
    'the scheduled job stays queued with no attempt used'
);

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second' WHERE id = :scheduled_id;
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-scheduled', worker => 'worker-a', batch => 10)$$,
    format($$VALUES (%s::bigint)$$, :scheduled_id),
    'once its run_at has passed the scheduled job is claimable'
);
RESET ROLE;

-- Finished jobs are never claimable -----------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'c', queue => 'claim-finished') AS cancelled_id \gset
SELECT taskboard.enqueue(task => 's', queue => 'claim-finished', priority => 1) AS succeeded_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS succeeded_token
  FROM taskboard.claim(queue => 'claim-finished', worker => 'worker-a')
 WHERE job_id = :succeeded_id \gset
SELECT ok(taskboard.complete(job_id => :succeeded_id, token => :'succeeded_token'),
    'the worker completes the higher-priority job');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :cancelled_id), 'an admin cancels the other, queued job');
RESET ROLE;

-- The succeeded job keeps its token; put its old deadline in the past too.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :succeeded_id;
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-finished', worker => 'worker-b', batch => 10)$$,
    'succeeded and cancelled jobs are not claimable, even with a lease deadline in the past'
);
RESET ROLE;

SELECT results_eq(
    format($$SELECT state FROM taskboard.jobs WHERE id IN (%s, %s) ORDER BY id$$, :cancelled_id, :succeeded_id),
    $$VALUES ('cancelled'::text), ('succeeded')$$,
    'claim left the finished jobs as they were'
);

-- An expired lease is reclaimed, and the reclaim is an attempt ---------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'send_email', queue => 'claim-expired', max_attempts => 3) AS expired_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS token_a, idempotency_key AS key_a
  FROM taskboard.claim(queue => 'claim-expired', worker => 'worker-a', lease => '60 seconds') \gset
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-expired', worker => 'worker-b')$$,
    'while A''s lease is live, B cannot claim the job'
);
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :expired_id;
RESET ROLE;

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE reclaimed ON COMMIT DROP AS
SELECT * FROM taskboard.claim(queue => 'claim-expired', worker => 'worker-b', lease => '60 seconds');
RESET ROLE;

SELECT results_eq(
    $$SELECT job_id, attempt FROM reclaimed$$,
    format($$VALUES (%s::bigint, 2)$$, :expired_id),
    'after the lease expired B reclaims the job, and the reclaim counts as attempt 2'
);

SELECT isnt((SELECT token FROM reclaimed), :'token_a'::uuid,
    'the reclaim issues a new token');

SELECT is((SELECT idempotency_key FROM reclaimed), :'key_a'::uuid,
    'the idempotency key is the same for every attempt of the job');

SELECT ok((SELECT lease_expires_at > :'t0'::timestamptz FROM reclaimed),
    'the reclaimed job has a new deadline in the future');

SELECT results_eq(
    format($$SELECT state, claimed_by, lease_token FROM taskboard.jobs WHERE id = %s$$, :expired_id),
    $$SELECT 'running'::text, 'worker-b'::text, token FROM reclaimed$$,
    'the job is running for B with B''s token'
);

-- An expired job out of attempts becomes dead without using the batch -------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'flaky', queue => 'claim-exhausted', max_attempts => 1, priority => 10) AS exhausted_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS exhausted_token
  FROM taskboard.claim(queue => 'claim-exhausted', worker => 'worker-a') \gset
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'fine', queue => 'claim-exhausted', priority => 0) AS fresh_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :exhausted_id;
RESET ROLE;

SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id, attempt FROM taskboard.claim(queue => 'claim-exhausted', worker => 'worker-b', batch => 1)$$,
    format($$VALUES (%s::bigint, 1)$$, :fresh_id),
    'batch 1 over an exhausted expired job and a queued one returns the queued one: the dead job does not use up the batch'
);
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT results_eq(
    format($$SELECT state, attempt, finished_at IS NOT NULL FROM taskboard.jobs WHERE id = %s$$, :exhausted_id),
    $$VALUES ('dead'::text, 1, true)$$,
    'the expired job whose attempts ran out is dead, with a finish time, in the same call'
);

SELECT results_eq(
    format($$SELECT e ->> 'error', (e ->> 'attempt')::int, e ->> 'worker',
                    (e ->> 'at')::timestamptz BETWEEN %L::timestamptz AND %L::timestamptz
               FROM taskboard.jobs AS j, pg_catalog.jsonb_array_elements(j.errors) AS e
              WHERE j.id = %s$$, :'t0', :'t1', :exhausted_id),
    $$VALUES ('lease expired'::text, 1, 'worker-a'::text, true)$$,
    'its error history records one error: lease expired, at attempt 1 of the worker that lost it, at the call'
);

SET LOCAL ROLE taskboard_worker;
SELECT is_empty(
    $$SELECT * FROM taskboard.claim(queue => 'claim-exhausted', worker => 'worker-b', batch => 10)$$,
    'the dead job is never returned'
);
SELECT is(
    taskboard.lease_state(job_id => :exhausted_id, token => :'exhausted_token'),
    'lost',
    'the buried job''s last token is no longer current'
);
RESET ROLE;

-- Expired jobs take their place in claim order among queued jobs ------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'm', queue => 'claim-mixed', priority => 0) AS mixed_expired \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS mixed_token FROM taskboard.claim(queue => 'claim-mixed', worker => 'worker-a') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :mixed_expired;
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'm', queue => 'claim-mixed', priority => 5)  AS mixed_high \gset
SELECT taskboard.enqueue(task => 'm', queue => 'claim-mixed', priority => -5) AS mixed_low \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-mixed', worker => 'worker-b', batch => 1)$$,
    format($$VALUES (%s::bigint)$$, :mixed_high),
    'a queued job of higher priority goes before an expired one'
);
SELECT results_eq(
    $$SELECT job_id, attempt FROM taskboard.claim(queue => 'claim-mixed', worker => 'worker-b', batch => 1)$$,
    format($$VALUES (%s::bigint, 2)$$, :mixed_expired),
    'an expired job goes before a queued job of lower priority'
);
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-mixed', worker => 'worker-b', batch => 1)$$,
    format($$VALUES (%s::bigint)$$, :mixed_low),
    'the lowest priority comes last'
);
RESET ROLE;

-- Expired and queued jobs in one batch come back in claim order.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE queue = 'claim-mixed';
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'm', queue => 'claim-mixed', priority => 1) AS mixed_one \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-mixed', worker => 'worker-c', batch => 10)$$,
    format($$VALUES (%s::bigint), (%s), (%s), (%s)$$, :mixed_high, :mixed_one, :mixed_expired, :mixed_low),
    'a batch mixing expired and queued jobs is returned in claim order'
);
RESET ROLE;

-- Name lengths: queue and worker up to 200 characters -------------------------
-- A longer queue or worker gets 22023 before claim takes or buries anything.

SELECT pg_catalog.repeat('q', 200) AS queue_200,
       pg_catalog.repeat('w', 200) AS worker_200 \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'n', queue => :'queue_200', priority => 1, max_attempts => 1) AS long_exhausted \gset
SELECT taskboard.enqueue(task => 'n', queue => :'queue_200') AS long_queued \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT job_id FROM taskboard.claim(queue => %L, worker => 'worker-a')$$, :'queue_200'),
    format($$VALUES (%s::bigint)$$, :long_exhausted),
    'a queue of exactly 200 characters is accepted'
);
RESET ROLE;

-- Its only attempt's lease runs out: the next accepted claim would bury it.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :long_exhausted;
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT * FROM taskboard.claim(queue => %L, worker => 'w')$$, :'queue_200' || 'q'),
    '22023', NULL, 'claim rejects a queue of 201 characters');
SELECT throws_ok(format($$SELECT * FROM taskboard.claim(queue => %L, worker => %L, batch => 10)$$,
                        :'queue_200', :'worker_200' || 'w'),
    '22023', NULL, 'claim rejects a worker of 201 characters');
RESET ROLE;

SELECT results_eq(
    format($$SELECT id, state, attempt, claimed_by FROM taskboard.jobs WHERE queue = %L ORDER BY id$$, :'queue_200'),
    format($$VALUES (%s::bigint, 'running'::text, 1, 'worker-a'::text), (%s, 'queued', 0, NULL)$$,
           :long_exhausted, :long_queued),
    'a claim rejected for its worker name neither buries the expired job nor takes the queued one'
);

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    format($$SELECT job_id FROM taskboard.claim(queue => %L, worker => %L, batch => 10)$$, :'queue_200', :'worker_200'),
    format($$VALUES (%s::bigint)$$, :long_queued),
    'a worker name of exactly 200 characters is accepted: the claim takes the queued job'
);
RESET ROLE;

SELECT results_eq(
    format($$SELECT id, state, claimed_by FROM taskboard.jobs WHERE queue = %L ORDER BY id$$, :'queue_200'),
    format($$VALUES (%s::bigint, 'dead'::text, 'worker-a'::text), (%s, 'running', %L)$$,
           :long_exhausted, :long_queued, :'worker_200'),
    'the accepted claim buried the expired job and stored the 200-character worker name whole'
);

-- Bad input: 22023, nothing changes ------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'b', queue => 'claim-bad') AS bad_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => NULL, worker => 'w')$$, '22023', NULL,
    'claim rejects a NULL queue');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => '', worker => 'w')$$, '22023', NULL,
    'claim rejects an empty queue');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => NULL)$$, '22023', NULL,
    'claim rejects a NULL worker');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => '')$$, '22023', NULL,
    'claim rejects an empty worker');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', batch => 0)$$, '22023', NULL,
    'claim rejects batch 0');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', batch => -1)$$, '22023', NULL,
    'claim rejects a negative batch');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', batch => 1001)$$, '22023', NULL,
    'claim rejects batch 1001');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', batch => NULL)$$, '22023', NULL,
    'claim rejects a NULL batch');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', lease => NULL)$$, '22023', NULL,
    'claim rejects a NULL lease');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', lease => '0 seconds')$$, '22023', NULL,
    'claim rejects a zero lease');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'claim-bad', worker => 'w', lease => '-5 seconds')$$, '22023', NULL,
    'claim rejects a negative lease');
RESET ROLE;

SELECT results_eq(
    format($$SELECT state, attempt, lease_token, claimed_by FROM taskboard.jobs WHERE id = %s$$, :bad_id),
    $$VALUES ('queued'::text, 0, NULL::uuid, NULL::text)$$,
    'rejected claims left the runnable job untouched'
);

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id FROM taskboard.claim(queue => 'claim-bad', worker => 'w', batch => 1000)$$,
    format($$VALUES (%s::bigint)$$, :bad_id),
    'batch 1000 is accepted'
);
RESET ROLE;

-- The trace context ---------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'traced', queue => 'claim-trace',
    trace_context => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT trace_context FROM taskboard.claim(queue => 'claim-trace', worker => 'w')$$,
    $$VALUES ('{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}'::jsonb)$$,
    'claim hands the holder the trace context its enqueuer stored'
);
RESET ROLE;

-- How long a job waited -------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'waited', queue => 'claim-wait') AS waited_job \gset
RESET ROLE;
-- Due ten minutes ago.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '10 minutes' WHERE id = :waited_job;
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT ok(
    (SELECT waited BETWEEN interval '10 minutes' AND interval '11 minutes'
       FROM taskboard.claim(queue => 'claim-wait', worker => 'w', lease => '1 second')),
    'waited: a job due ten minutes ago had waited ten minutes when claimed'
);
RESET ROLE;
-- Its lease expired two minutes ago: a reclaim counts from the expiry, not from run_at.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '2 minutes'
 WHERE id = :waited_job;
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT ok(
    (SELECT waited BETWEEN interval '2 minutes' AND interval '3 minutes'
       FROM taskboard.claim(queue => 'claim-wait', worker => 'w')),
    'waited: a reclaimed expired lease had waited since its deadline'
);
RESET ROLE;

-- lease bounded by the deadline it gives ------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT * FROM taskboard.claim('q', 'w', 1, '12000 mon -360000 days 11 hours')$$,
    'lease must be at most 12 hours, got %', 'a worker cannot claim with a lease of months less days, 5,242 days long');
SELECT throws_like($$SELECT * FROM taskboard.claim('q', 'w', 1, '1 mon -30 days')$$,
    'lease must be %, got %', 'a worker cannot claim with a month less 30 days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
