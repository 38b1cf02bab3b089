-- job_activity(recent): per minute and queue, the jobs that succeeded, died
-- or were cancelled, and the attempts that failed (each entry of a job's
-- errors), within `recent`, oldest minute first. Every role may read it;
-- bad input raises 22023.
--
-- Jobs are written as taskboard_owner with the finish times and error
-- entries the test needs.

BEGIN;
SELECT plan(7);

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.job_activity(NULL)$$, '22023',
    'recent must be positive and at most 31 days, got NULL', 'recent must not be NULL');
SELECT throws_ok($$SELECT * FROM taskboard.job_activity(interval '32 days')$$, '22023', NULL,
    'recent is at most 31 days');
SELECT throws_ok($$SELECT * FROM taskboard.job_activity(interval '0')$$, '22023', NULL,
    'recent must be positive');
RESET ROLE;

-- Three minutes ago (m3), two (m2) and one (m1), a few seconds into each.
SELECT pg_catalog.date_trunc('minute', clock_timestamp()) - interval '3 minutes' + interval '5 seconds' AS m3,
       pg_catalog.date_trunc('minute', clock_timestamp()) - interval '2 minutes' + interval '5 seconds' AS m2,
       pg_catalog.date_trunc('minute', clock_timestamp()) - interval '1 minute' + interval '5 seconds' AS m1 \gset

SET LOCAL ROLE taskboard_owner;
INSERT INTO taskboard.jobs (queue, task, state, run_at, attempt, max_attempts,
                            lease_token, lease_expires_at, claimed_by, finished_at, errors)
VALUES
    -- Succeeded at m1 after failing at m3.
    ('act', 't', 'succeeded', :'m3', 2, 3, NULL, NULL, NULL, :'m1',
     pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('error', 'e', 'attempt', 1, 'worker', 'w', 'at', :'m3'::timestamptz))),
    -- Died at m1 of its second failure; the first was at m2.
    ('act', 't', 'dead', :'m3', 2, 2, NULL, NULL, NULL, :'m1',
     pg_catalog.jsonb_build_array(
         pg_catalog.jsonb_build_object('error', 'e', 'attempt', 1, 'worker', 'w', 'at', :'m2'::timestamptz),
         pg_catalog.jsonb_build_object('error', 'e', 'attempt', 2, 'worker', 'w', 'at', :'m1'::timestamptz))),
    -- Waits for its next attempt: failed at m2, and once long ago.
    ('act', 't', 'queued', :'m1', 2, 5, NULL, NULL, NULL, NULL,
     pg_catalog.jsonb_build_array(
         pg_catalog.jsonb_build_object('error', 'e', 'attempt', 1, 'worker', 'w', 'at', :'m3'::timestamptz - interval '3 hours'),
         pg_catalog.jsonb_build_object('error', 'e', 'attempt', 2, 'worker', 'w', 'at', :'m2'::timestamptz))),
    -- Runs its second attempt after failing at m3.
    ('act', 't', 'running', :'m3', 2, 3, gen_random_uuid(), :'m1'::timestamptz + interval '1 hour', 'w', NULL,
     pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('error', 'e', 'attempt', 1, 'worker', 'w', 'at', :'m3'::timestamptz))),
    -- Died at m2, then retried by an admin: queued, attempts reset, errors kept.
    ('act', 't', 'queued', :'m1', 0, 1, NULL, NULL, NULL, NULL,
     pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('error', 'e', 'attempt', 1, 'worker', 'w', 'at', :'m2'::timestamptz))),
    -- Cancelled at m2 in another queue; and a job that succeeded long ago.
    ('act-b', 't', 'cancelled', :'m3', 0, 3, NULL, NULL, NULL, :'m2', '[]'),
    ('act', 't', 'succeeded', :'m3', 1, 3, NULL, NULL, NULL, :'m3'::timestamptz - interval '2 hours', '[]');
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT results_eq(
    $$SELECT minute_start, queue, succeeded, failed, dead, cancelled
        FROM taskboard.job_activity() WHERE queue LIKE 'act%'$$,
    format($$VALUES (%L::timestamptz, 'act'::text,   0::bigint, 2::bigint, 0::bigint, 0::bigint),
                    (%L::timestamptz, 'act'::text,   0::bigint, 3::bigint, 0::bigint, 0::bigint),
                    (%L::timestamptz, 'act-b'::text, 0::bigint, 0::bigint, 0::bigint, 1::bigint),
                    (%L::timestamptz, 'act'::text,   1::bigint, 1::bigint, 1::bigint, 0::bigint)$$,
           pg_catalog.date_trunc('minute', :'m3'::timestamptz),
           pg_catalog.date_trunc('minute', :'m2'::timestamptz),
           pg_catalog.date_trunc('minute', :'m2'::timestamptz),
           pg_catalog.date_trunc('minute', :'m1'::timestamptz)),
    'per minute and queue, oldest first: failed attempts of finished, queued, retried and running jobs, and each finish; nothing older than an hour'
);
SELECT results_eq(
    $$SELECT pg_catalog.sum(succeeded)::bigint, pg_catalog.sum(failed)::bigint
        FROM taskboard.job_activity(interval '1 day') WHERE queue = 'act'$$,
    $$VALUES (2::bigint, 7::bigint)$$,
    'a longer `recent` takes the older success and failure in'
);
SELECT is_empty(
    $$SELECT * FROM taskboard.job_activity(interval '10 seconds') WHERE queue LIKE 'act%' AND minute_start < pg_catalog.date_trunc('minute', clock_timestamp()) - interval '1 minute'$$,
    'a short `recent` leaves the older minutes out'
);
RESET ROLE;

-- recent bounded by the time it gives ---------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_like($$SELECT * FROM taskboard.job_activity('12000 mon -360000 days 11 hours')$$,
    'recent must be positive and at most 31 days, got %', 'a producer cannot chart years of months less days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
