-- enqueue_periodic(schedule, slot, task, payload, queue, priority,
-- max_attempts): the job of one slot of a schedule, exactly once. The first
-- call for a slot returns the job's id; every later call for that slot or an
-- earlier one returns NULL and writes nothing, so of the slots missed while
-- no worker ran only the latest (sent first) gets a job. A slot later than
-- the database clock, and bad input, raise 22023 and write nothing. The job
-- is an ordinary queued job whose run_at is its slot; the view
-- taskboard.schedules shows each schedule's latest slot and job.
--
-- Workers and admins may call it, producers not. Concurrent callers of one slot
-- are raced in tests/process/test_periodic.py, with real sessions; notifications
-- are seen there too, after commit.

BEGIN;
SELECT plan(54);

SELECT pg_catalog.date_trunc('minute', pg_catalog.clock_timestamp()) - interval '1 minute' AS slot \gset

-- Who may: workers and admins, not producers -----------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.enqueue_periodic(schedule => 'by-producer', slot => clock_timestamp(), task => 'tick')$$,
    '42501', NULL, 'a producer cannot enqueue the job of a slot (it could take every slot first)');
SELECT lives_ok($$SELECT * FROM taskboard.schedules$$, 'a producer can read taskboard.schedules');
SELECT throws_ok($$SELECT * FROM taskboard.schedule_slots$$, '42501', NULL,
    'a producer cannot read the table behind it');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic(schedule => 'by-worker', slot => :'slot', task => 'tick'), NULL,
    'a worker enqueues the job of a slot (every worker runs the scheduler)');
SELECT lives_ok($$SELECT * FROM taskboard.schedules$$, 'a worker can read taskboard.schedules');
SELECT throws_ok(
    format($$UPDATE taskboard.schedule_slots SET last_slot = %L WHERE schedule = 'by-worker'$$,
           :'slot'::timestamptz - interval '1 day'),
    '42501', NULL,
    'a worker cannot move a schedule''s last slot back by hand');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT isnt(taskboard.enqueue_periodic(schedule => 'by-admin', slot => :'slot', task => 'tick'), NULL,
    'an admin enqueues the job of a slot');
SELECT lives_ok($$SELECT * FROM taskboard.schedules$$, 'an admin can read taskboard.schedules');
RESET ROLE;

-- Exactly once per slot -------------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.enqueue_periodic(
    schedule     => 'report',
    slot         => :'slot',
    task         => 'send_report',
    payload      => '{"kind": "hourly"}',
    queue        => 'reports',
    priority     => 3,
    max_attempts => 2
) AS first_id \gset
SELECT is(taskboard.enqueue_periodic('report', :'slot', 'send_report', '{"kind": "hourly"}', 'reports', 3, 2),
    NULL, 'the same slot again returns NULL');
SELECT is(taskboard.enqueue_periodic('report', :'slot', 'send_report', queue => 'reports'),
    NULL, 'the same slot with another payload, priority or max_attempts returns NULL too: the slot is the schedule''s');
SELECT is(taskboard.enqueue_periodic('report', :'slot'::timestamptz - interval '1 minute', 'send_report', queue => 'reports'),
    NULL, 'an earlier slot returns NULL once a later one was enqueued');
SELECT results_eq(
    format($$SELECT queue, task, state, attempt, max_attempts, priority, run_at, finished_at
               FROM taskboard.get_job(%s)$$, :first_id),
    format($$VALUES ('reports'::text, 'send_report'::text, 'queued'::text, 0, 2, 3, %L::timestamptz,
                     NULL::timestamptz)$$, :'slot'),
    'the slot''s job is queued in the queue given, with its priority, max_attempts and its slot as run_at'
);
SELECT results_eq(
    $$SELECT schedule, last_slot FROM taskboard.schedules WHERE schedule = 'report'$$,
    format($$VALUES ('report'::text, %L::timestamptz)$$, :'slot'),
    'taskboard.schedules shows the schedule''s latest slot'
);
SELECT is((SELECT last_job_id FROM taskboard.schedules WHERE schedule = 'report'), :first_id::bigint,
    'and its job');
RESET ROLE;

SELECT is((SELECT payload FROM taskboard.jobs WHERE id = :first_id), '{"kind": "hourly"}'::jsonb,
    'the job carries the payload given');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE task = 'send_report'), 1::bigint,
    'three calls for the slot made one job');

SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT job_id FROM taskboard.claim(queue => 'reports', worker => 'w1')), :first_id::bigint,
    'the job is runnable at once: a worker claims it');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.enqueue_periodic('report', :'slot'::timestamptz + interval '30 seconds', 'send_report',
                                  queue => 'reports') AS second_id \gset
SELECT isnt(:'second_id'::bigint, NULL, 'a later slot makes a new job');
SELECT isnt(:'second_id'::bigint, :first_id::bigint, 'a job of its own');
SELECT is((SELECT last_job_id FROM taskboard.schedules WHERE schedule = 'report'), :second_id::bigint,
    'taskboard.schedules moves to the later slot''s job');
SELECT is(taskboard.enqueue_periodic('report', :'slot', 'send_report', queue => 'reports'), NULL,
    'the first slot still returns NULL');
RESET ROLE;

-- Schedules are independent -----------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic('report-daily', :'slot', 'send_report'), NULL,
    'another schedule''s same slot makes its own job');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.schedules WHERE schedule LIKE 'report%'), 2::bigint,
    'one row per schedule');
RESET ROLE;

-- Missed slots: only the latest -----------------------------------------------------------

-- The schedule last ran three hours ago; no worker ran since. A worker that
-- starts now sends the latest due slot: it gets a job, and the slots
-- missed before it never do.
SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic('hourly', :'slot'::timestamptz - interval '3 hours', 'hourly_tick'), NULL,
    'the schedule''s slot of three hours ago made a job');
SELECT isnt(taskboard.enqueue_periodic('hourly', :'slot', 'hourly_tick'), NULL,
    'the latest due slot makes a job after slots were missed');
SELECT is(taskboard.enqueue_periodic('hourly', :'slot'::timestamptz - interval '1 hour', 'hourly_tick'), NULL,
    'a missed slot before it returns NULL');
SELECT is(taskboard.enqueue_periodic('hourly', :'slot'::timestamptz - interval '2 hours', 'hourly_tick'), NULL,
    'and so does every other missed slot');
RESET ROLE;
SELECT is(
    (SELECT pg_catalog.array_agg(run_at ORDER BY run_at) FROM taskboard.jobs WHERE task = 'hourly_tick'),
    ARRAY[:'slot'::timestamptz - interval '3 hours', :'slot'::timestamptz],
    'the schedule has the jobs of the slot before the gap and of the latest slot, none between'
);

-- The slot is the database's: none from the future ----------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic('future', %L, 'tick')$$,
           pg_catalog.clock_timestamp() + interval '1 minute'),
    '22023', NULL,
    'a slot later than the database clock is refused');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic('hourly', %L, 'tick')$$,
           pg_catalog.clock_timestamp() + interval '1 second'),
    '22023', NULL,
    'also for a schedule that has slots, and a second ahead');
SELECT isnt(taskboard.enqueue_periodic('now', pg_catalog.clock_timestamp(), 'tick'), NULL,
    'a slot of the database clock''s present is accepted');
RESET ROLE;

-- A rollback frees the slot --------------------------------------------------------------

SAVEPOINT before_slot;
SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic('rolled-back', :'slot', 'tick'), NULL,
    'a slot enqueued in a transaction');
ROLLBACK TO SAVEPOINT before_slot;
SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic('rolled-back', :'slot', 'tick'), NULL,
    'is free again once that transaction rolled back: the job and the slot go together');
RESET ROLE;

-- Bad input: 22023, nothing written ---------------------------------------------------------

SELECT pg_catalog.count(*) AS jobs_before_bad FROM taskboard.jobs \gset
SELECT pg_catalog.count(*) AS slots_before_bad FROM taskboard.schedule_slots \gset
SELECT pg_catalog.repeat('s', 200) AS name_200 \gset

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic(NULL, %L, 't')$$, :'slot'), '22023',
    'schedule must not be NULL or empty', 'a NULL schedule is refused, naming schedule');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('', %L, 't')$$, :'slot'), '22023', NULL,
    'an empty schedule is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic(%L, %L, 't')$$, :'name_200' || 's', :'slot'), '22023', NULL,
    'a schedule over 200 characters is refused');
SELECT throws_ok($$SELECT taskboard.enqueue_periodic('bad', NULL, 't')$$, '22023',
    'slot must not be NULL', 'a NULL slot is refused, naming slot');
SELECT throws_ok($$SELECT taskboard.enqueue_periodic('bad', '-infinity', 't')$$, '22023', NULL,
    'a slot of -infinity is refused');
SELECT throws_ok($$SELECT taskboard.enqueue_periodic('bad', 'infinity', 't')$$, '22023', NULL,
    'a slot of infinity is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, NULL)$$, :'slot'), '22023',
    'task must not be NULL or empty', 'a NULL task is refused, naming task');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, '')$$, :'slot'), '22023', NULL,
    'an empty task is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, %L)$$, :'slot', :'name_200' || 't'), '22023', NULL,
    'a task over 200 characters is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', queue => NULL)$$, :'slot'), '22023',
    'queue must not be NULL or empty', 'a NULL queue is refused, naming queue');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', queue => '')$$, :'slot'), '22023', NULL,
    'an empty queue is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', queue => %L)$$, :'slot', :'name_200' || 'q'), '22023', NULL,
    'a queue over 200 characters is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', payload => NULL)$$, :'slot'), '22023', NULL,
    'a NULL payload is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', priority => NULL)$$, :'slot'), '22023', NULL,
    'a NULL priority is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', max_attempts => NULL)$$, :'slot'), '22023', NULL,
    'a NULL max_attempts is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('bad', %L, 't', max_attempts => 0)$$, :'slot'), '22023', NULL,
    'max_attempts 0 is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue_periodic('report', %L, NULL)$$, :'slot'), '22023', NULL,
    'bad input is refused for a slot already taken too, not answered with NULL');
RESET ROLE;

SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs), :jobs_before_bad::bigint,
    'refused calls enqueued nothing');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.schedule_slots), :slots_before_bad::bigint,
    'and took no slot');

-- slot inside the years 1 to 9999 ---------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT taskboard.enqueue_periodic('s', '0001-01-01 00:00:00+00'::timestamptz - interval '1 second', 't')$$,
    'slot must be between 0001-01-01 and 9999-12-31, got %', 'a worker cannot take a slot before the year 1');
SELECT throws_like($$SELECT taskboard.enqueue_periodic('s', '10000-01-01 00:00:00+00', 't')$$,
    'slot must be between 0001-01-01 and 9999-12-31, got %', 'a slot in the year 10000 is refused as out of range');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
