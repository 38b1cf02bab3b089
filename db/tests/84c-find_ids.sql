-- find_ids(queue, state, task, after_id, max_rows): the search of find_jobs
-- and find_jobs_summary, called directly. The ids of the jobs matching every
-- filter given (NULL: any), below after_id when given, newest first, at
-- most max_rows; an empty queue or task, an unknown state and max_rows
-- outside 1..1000 raise 22023. Internal: the application roles cannot call
-- it; find_jobs does (84-find_jobs, 84b-find_jobs_summary).

BEGIN;
SELECT plan(15);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.find_ids('fi-a', NULL, NULL, NULL, 10)$$, '42501', NULL,
    'an admin cannot call find_ids');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.find_ids('fi-a', NULL, NULL, NULL, 10)$$, '42501', NULL,
    'a worker cannot call find_ids');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Queue fi-a: j1 (fi-t1, queued), j2 (fi-t2, queued), j3 (fi-t1, running).
-- Queue fi-b: j4 (fi-t1, queued), j5 (fi-t1, dead).
SELECT taskboard.enqueue(task => 'fi-t1', queue => 'fi-a') AS j1 \gset
SELECT taskboard.enqueue(task => 'fi-t2', queue => 'fi-a') AS j2 \gset
SELECT taskboard.enqueue(task => 'fi-t1', queue => 'fi-a') AS j3 \gset
SELECT taskboard.enqueue(task => 'fi-t1', queue => 'fi-b') AS j4 \gset
SELECT taskboard.enqueue(task => 'fi-t1', queue => 'fi-b') AS j5 \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w',
       started_at = clock_timestamp(), lease_expires_at = clock_timestamp() + interval '1 minute'
 WHERE id = :j3;
UPDATE taskboard.jobs SET state = 'dead', finished_at = clock_timestamp() WHERE id = :j5;

-- Filters, order, paging ------------------------------------------------------------------

SELECT is(taskboard.find_ids('fi-a', NULL, NULL, NULL, 10), ARRAY[:j3, :j2, :j1]::bigint[],
    'by queue alone: every job of the queue, newest first');
SELECT is(taskboard.find_ids('fi-a', 'queued', NULL, NULL, 10), ARRAY[:j2, :j1]::bigint[],
    'queue and state: the running job is left out');
SELECT is(taskboard.find_ids(NULL, NULL, 'fi-t1', NULL, 10), ARRAY[:j5, :j4, :j3, :j1]::bigint[],
    'by task alone (NULL queue: every queue): the jobs of the task in both queues');
SELECT is(taskboard.find_ids('fi-b', 'dead', 'fi-t1', NULL, 10), ARRAY[:j5]::bigint[],
    'every filter given applies: queue, state and task');
SELECT is(taskboard.find_ids('fi-a', NULL, NULL, :j3, 10), ARRAY[:j2, :j1]::bigint[],
    'after_id keeps the ids below it only, not itself');
SELECT is(taskboard.find_ids('fi-a', NULL, NULL, NULL, 2), ARRAY[:j3, :j2]::bigint[],
    'at most max_rows, the newest');
SELECT is(taskboard.find_ids('fi-a', 'succeeded', NULL, NULL, 10), '{}'::bigint[],
    'no match gives an empty array');

-- Refusals ------------------------------------------------------------------------------------

SELECT throws_ok($$SELECT taskboard.find_ids('', NULL, NULL, NULL, 10)$$, '22023',
    'queue must not be empty (NULL: every queue)', 'an empty queue is refused');
SELECT throws_ok($$SELECT taskboard.find_ids(NULL, NULL, '', NULL, 10)$$, '22023',
    'task must not be empty (NULL: every task)', 'an empty task is refused');
SELECT throws_ok($$SELECT taskboard.find_ids(NULL, 'done', NULL, NULL, 10)$$, '22023',
    'state must be waiting, queued, running, succeeded, dead or cancelled, got ''done''',
    'an unknown state is refused, named');
SELECT throws_ok($$SELECT taskboard.find_ids(NULL, NULL, NULL, NULL, 0)$$, '22023',
    'max_rows must be between 1 and 1000, got 0', 'max_rows 0 is refused');
SELECT throws_ok($$SELECT taskboard.find_ids(NULL, NULL, NULL, NULL, 1001)$$, '22023',
    'max_rows must be between 1 and 1000, got 1001', 'max_rows over 1000 is refused');
SELECT throws_ok($$SELECT taskboard.find_ids(NULL, NULL, NULL, NULL, NULL)$$, '22023',
    'max_rows must be between 1 and 1000, got NULL', 'a NULL max_rows is refused');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
