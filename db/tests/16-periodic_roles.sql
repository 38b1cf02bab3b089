-- enqueue_periodic is the workers' and the admin's, and a slot's identity
-- includes the task and queue of its job: a slot taken for another task or
-- queue raises 23505 and is shown as such by taskboard.schedules, never as
-- the schedule's job. previous_names carries a renamed schedule's slots
-- over (remove_schedule: 16b-remove_schedule.sql).

BEGIN;
SELECT plan(19);

SELECT pg_catalog.date_trunc('minute', pg_catalog.clock_timestamp()) - interval '10 minutes' AS slot \gset

-- A producer cannot take a slot ------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(
    $$SELECT taskboard.enqueue_periodic(schedule => 'nightly', slot => pg_catalog.clock_timestamp(),
                                        task => 'noop', queue => 'blackhole')$$,
    '42501', NULL, 'a producer cannot take a schedule''s slot for a job of its own');
RESET ROLE;

-- A slot taken for another task or queue is a conflict -------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic(schedule => 'nightly', slot => :'slot', task => 'noop', queue => 'blackhole'),
    NULL, 'a worker whose app declares nightly as task noop takes the slot');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic(schedule => 'nightly', slot => %L, task => 'send_report', queue => 'reports')$$, :'slot'),
    '23505', NULL, 'the same slot for another task and queue raises 23505, not NULL as if it had its job');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic(schedule => 'nightly', slot => %L, task => 'noop', queue => 'reports')$$, :'slot'),
    '23505', NULL, 'the same slot for the same task on another queue raises 23505 too');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic(schedule => 'nightly', slot => %L, task => 'send_report', queue => 'reports')$$,
           :'slot'::timestamptz - interval '1 minute'),
    '23505', NULL, 'an earlier slot, under a later one taken for another task, raises 23505');
SELECT is(taskboard.enqueue_periodic(schedule => 'nightly', slot => :'slot', task => 'noop', queue => 'blackhole'),
    NULL, 'the same slot for the same task and queue is NULL: it has its job');
SELECT results_eq(
    $$SELECT task, queue FROM taskboard.schedules WHERE schedule = 'nightly'$$,
    $$VALUES ('noop'::text, 'blackhole'::text)$$,
    'taskboard.schedules shows the task and queue the slot was taken for');
SELECT isnt(taskboard.enqueue_periodic(schedule => 'nightly', slot => :'slot'::timestamptz + interval '1 minute',
                                       task => 'send_report', queue => 'reports'),
    NULL, 'a later slot is taken for the new task and queue: a changed declaration takes effect at its next slot');
SELECT results_eq(
    $$SELECT s.task, s.queue, j.task, j.queue
        FROM taskboard.schedules AS s
        JOIN taskboard.get_job(s.last_job_id) AS j ON true
       WHERE s.schedule = 'nightly'$$,
    $$VALUES ('send_report'::text, 'reports'::text, 'send_report'::text, 'reports'::text)$$,
    'the row shows the new task and queue, and its job is of that task on that queue');
RESET ROLE;

-- A row from before the task was kept (its job pruned) ------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic(schedule => 'legacy', slot => :'slot', task => 'tick'),
    NULL, 'legacy takes a slot');
RESET ROLE;
UPDATE taskboard.schedule_slots SET task = NULL, queue = NULL, last_job_id = NULL WHERE schedule = 'legacy';
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.enqueue_periodic(schedule => 'legacy', slot => :'slot', task => 'tock'),
    NULL, 'a slot taken before task and queue were kept is taken, whatever the task: NULL, no conflict');
SELECT isnt(taskboard.enqueue_periodic(schedule => 'legacy', slot => :'slot'::timestamptz + interval '1 minute', task => 'tock'),
    NULL, 'its next slot is enqueued');
SELECT results_eq($$SELECT task, queue FROM taskboard.schedules WHERE schedule = 'legacy'$$,
    $$VALUES ('tock'::text, 'default'::text)$$, 'and sets the row''s task and queue');
RESET ROLE;

-- A renamed schedule -----------------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT taskboard.enqueue_periodic(schedule => 'report-old', slot => :'slot', task => 'send_report') AS old_id \gset
SELECT is(taskboard.enqueue_periodic(schedule => 'report-new', slot => :'slot', task => 'send_report',
                                     previous_names => ARRAY['report-old']),
    NULL, 'the first call under a new name, for a slot the old name had, enqueues nothing');
SELECT results_eq($$SELECT last_slot, last_job_id FROM taskboard.schedules WHERE schedule = 'report-new'$$,
    format($$VALUES (%L::timestamptz, %s::bigint)$$, :'slot', :old_id),
    'the new name''s row starts from the old name''s latest slot and job');
SELECT taskboard.enqueue_periodic(schedule => 'report-new', slot => :'slot'::timestamptz + interval '1 minute',
                                  task => 'send_report', previous_names => ARRAY['report-old']) AS new_id \gset
SELECT isnt(:'new_id'::bigint, NULL, 'the next slot under the new name is enqueued');
SELECT is(taskboard.enqueue_periodic(schedule => 'report-old', slot => :'slot'::timestamptz + interval '1 minute',
                                     task => 'send_report'),
    NULL, 'a worker still declaring the old name finds that slot taken');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.find_jobs(queue => 'default', task => 'send_report')),
    2::bigint, 'two slots, two jobs across the rename');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic(schedule => 'report-new', slot => %L, task => 'send_report',
                                               previous_names => ARRAY[''])$$, :'slot'),
    '22023', NULL, 'an empty name in previous_names is refused with 22023');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
