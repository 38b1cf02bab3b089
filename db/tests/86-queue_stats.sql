-- queue_stats: one row per queue and state with the number of jobs, the
-- earliest run_at among them, and how many of them claim would take now
-- (queued and due, or running with an expired lease and attempts left: an
-- expired job out of attempts is buried by claim, not taken). Producers,
-- workers and admins read it; it shows no lease token.
--
-- A producer enqueues and reads the view; a worker claims, completes and
-- fails; an admin cancels. A lease expires by moving its deadline into the
-- past as taskboard_owner.

BEGIN;
SELECT plan(20);

-- The view's columns ----------------------------------------------------------

SELECT has_column('taskboard', 'queue_stats', 'queue',         'queue_stats has a queue column');
SELECT has_column('taskboard', 'queue_stats', 'state',         'queue_stats has a state column');
SELECT has_column('taskboard', 'queue_stats', 'jobs',          'queue_stats has a jobs column');
SELECT has_column('taskboard', 'queue_stats', 'oldest_run_at', 'queue_stats has an oldest_run_at column');
SELECT col_type_is('taskboard', 'queue_stats', 'jobs', 'bigint', 'queue_stats.jobs is a bigint count');
SELECT col_type_is('taskboard', 'queue_stats', 'oldest_run_at', 'timestamp with time zone',
    'queue_stats.oldest_run_at is a timestamptz');

SELECT is_empty(
    $$SELECT a.attname
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.queue_stats'::regclass
         AND a.attnum > 0
         AND (a.attname LIKE '%token%' OR a.attname = 'claimed_by')$$,
    'queue_stats shows no token and no holder'
);

-- Jobs in every state ---------------------------------------------------------

SELECT clock_timestamp() - interval '2 hours' AS two_hours_ago,
       clock_timestamp() + interval '1 hour'  AS in_an_hour \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'r', queue => 'stats-q', priority => 9) AS running_live \gset
SELECT taskboard.enqueue(task => 'r', queue => 'stats-q', priority => 9) AS running_expired \gset
SELECT taskboard.enqueue(task => 's', queue => 'stats-q', priority => 9) AS succeeded_id \gset
SELECT taskboard.enqueue(task => 'd', queue => 'stats-q', priority => 9, max_attempts => 1) AS dead_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
CREATE TEMP TABLE held ON COMMIT DROP AS
SELECT job_id, token FROM taskboard.claim(queue => 'stats-q', worker => 'stats-worker', batch => 4);
RESET ROLE;
SELECT token AS succeeded_token FROM held WHERE job_id = :succeeded_id \gset
SELECT token AS dead_token FROM held WHERE job_id = :dead_id \gset

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.complete(job_id => :succeeded_id, token => :'succeeded_token') AS completed \gset
SELECT taskboard.fail(job_id => :dead_id, token => :'dead_token', error => 'boom') AS failed \gset
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :running_expired;
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'q', queue => 'stats-q', run_at => :'two_hours_ago') AS queued_old \gset
SELECT taskboard.enqueue(task => 'q', queue => 'stats-q') AS queued_now \gset
SELECT taskboard.enqueue(task => 'q', queue => 'stats-q', run_at => :'in_an_hour') AS queued_later \gset
SELECT taskboard.enqueue(task => 'c', queue => 'stats-q') AS cancelled_id \gset
SELECT taskboard.enqueue(task => 'o', queue => 'stats-other') AS other_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(job_id => :cancelled_id) AS cancelled \gset
RESET ROLE;

SELECT is(:'completed' || '/' || :'failed' || '/' || :'cancelled', 't/dead/t',
    'the setup completed one job, buried one and cancelled one');

SET LOCAL ROLE taskboard_producer;
SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-q'$$,
    $$VALUES ('queued'::text, 3::bigint, 2::bigint),
             ('running', 2, 1),
             ('succeeded', 1, 0),
             ('dead', 1, 0),
             ('cancelled', 1, 0)$$,
    'a producer reads one row per state of the queue: how many jobs, and how many claim would take now'
);

SELECT is(
    (SELECT oldest_run_at FROM taskboard.queue_stats WHERE queue = 'stats-q' AND state = 'queued'),
    :'two_hours_ago'::timestamptz,
    'oldest_run_at of the queued jobs is the earliest run_at among them'
);

SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-other'$$,
    $$VALUES ('queued'::text, 1::bigint, 1::bigint)$$,
    'each queue is counted on its own'
);

SELECT is_empty(
    $$SELECT * FROM taskboard.queue_stats WHERE queue = 'stats-no-such-queue'$$,
    'a queue without jobs has no row'
);
RESET ROLE;

-- The counts follow the jobs, for every role -----------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS reclaimed FROM taskboard.claim(queue => 'stats-q', worker => 'stats-worker', batch => 1) \gset
SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-q' AND state IN ('queued', 'running')$$,
    $$VALUES ('queued'::text, 3::bigint, 2::bigint), ('running', 2, 0)$$,
    'a worker sees the reclaimed job still running but no longer runnable'
);
SELECT job_id AS took_old FROM taskboard.claim(queue => 'stats-q', worker => 'stats-worker', batch => 1) \gset
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-q' AND state IN ('queued', 'running')$$,
    $$VALUES ('queued'::text, 2::bigint, 1::bigint), ('running', 3, 0)$$,
    'an admin sees a claimed queued job move from queued to running'
);
SELECT is(
    (SELECT oldest_run_at FROM taskboard.queue_stats WHERE queue = 'stats-q' AND state = 'queued'),
    (SELECT j.run_at FROM taskboard.get_job(job_id => :queued_now) AS j),
    'once the oldest queued job is claimed, oldest_run_at moves to the next one'
);
RESET ROLE;

SELECT results_eq(
    format($$VALUES (%s::bigint, %s::bigint)$$, :reclaimed, :took_old),
    format($$VALUES (%s::bigint, %s::bigint)$$, :running_expired, :queued_old),
    'the claims took the expired job first (priority 9), then the oldest queued job'
);

-- An expired lease with no attempt left is not runnable -------------------------
-- claim would bury that job, not take it: runnable counts only what claim
-- would hand out.

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'x', queue => 'stats-exhausted', max_attempts => 1) AS exhausted_id \gset
SELECT taskboard.enqueue(task => 'x', queue => 'stats-exhausted', max_attempts => 2) AS retryable_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT pg_catalog.count(*) AS exhausted_claimed
  FROM taskboard.claim(queue => 'stats-exhausted', worker => 'stats-worker', batch => 2) \gset
RESET ROLE;
SELECT is(:exhausted_claimed::bigint, 2::bigint, 'the setup claimed both jobs for their first attempt');

SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE queue = 'stats-exhausted';
RESET ROLE;

SET LOCAL ROLE taskboard_producer;
SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-exhausted'$$,
    $$VALUES ('running'::text, 2::bigint, 1::bigint)$$,
    'of two expired leases on attempt 1, only the job allowed a second attempt is runnable'
);
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT results_eq(
    $$SELECT job_id, attempt FROM taskboard.claim(queue => 'stats-exhausted', worker => 'stats-worker', batch => 10)$$,
    format($$VALUES (%s::bigint, 2)$$, :retryable_id),
    'claim takes exactly the one job runnable counted'
);
SELECT set_eq(
    $$SELECT state, jobs, runnable FROM taskboard.queue_stats WHERE queue = 'stats-exhausted'$$,
    $$VALUES ('running'::text, 1::bigint, 0::bigint), ('dead', 1, 0)$$,
    'the job out of attempts was buried by that claim, and nothing is runnable'
);
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
