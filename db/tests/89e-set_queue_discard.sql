-- set_queue_discard(queue, discard): an accepted completion of a job of a
-- discarding queue deletes the job and its history; a stale token deletes
-- nothing; a job another job waits on is kept, and its dependent runs;
-- failures are kept; a repeated completion answers false. Admins only; bad
-- input raises 22023 and writes nothing. A job locked by another
-- transaction, and a completion outside READ COMMITTED, are raced in
-- tests/sql/test_discard.py.

BEGIN;
SELECT plan(31);

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;

-- Who may: admins only ---------------------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.set_queue_discard('qd', true)$$, '42501', NULL, 'a worker cannot make a queue discard');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.set_queue_discard('qd', true)$$, '42501', NULL, 'nor can a producer');
RESET ROLE;

-- Bad input ------------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.set_queue_discard(NULL, true)$$, '22023', NULL, 'a NULL queue is refused');
SELECT throws_ok($$SELECT taskboard.set_queue_discard(repeat('q', 201), true)$$, '22023',
    'queue must be at most 200 characters, got 201', 'a queue name over 200 characters is refused');
SELECT throws_ok($$SELECT taskboard.set_queue_discard('qd', NULL)$$, '22023',
    'discard must not be NULL (true deletes completed jobs, false keeps them)', 'a NULL setting is refused, naming both');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queues$$, 'and nothing was written');

-- The setting ----------------------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_discard('qd', false), false, 'keeping the jobs of a queue without settings changes nothing');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.queues$$, 'and writes no row');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.set_queue_discard('qd', true), true, 'set_queue_discard makes a queue discard');
SELECT is(taskboard.set_queue_discard('qd', true), false, 'the same setting again changes nothing');
RESET ROLE;
SELECT is((SELECT discard_succeeded FROM taskboard.queues WHERE queue = 'qd'), true, 'the queue''s row says so');

-- An accepted completion deletes the job, its history with it -----------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qd') AS a \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_stale FROM taskboard.claim('qd', 'w1') \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :a;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim('qd', 'w2') \gset
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.job_events WHERE job_id = :a), 1::bigint, 'the reclaim is a line of the job''s history');

SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'a_stale'::uuid), false, 'the reclaimed holder''s completion is refused');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :a), 'running', 'and deletes nothing: the job runs on');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'a_token'::uuid, '{"r": 1}'), true, 'the holder''s completion is accepted');
RESET ROLE;
SELECT is_empty(format('SELECT * FROM taskboard.jobs WHERE id = %s', :a), 'and deletes the job');
SELECT is_empty(format('SELECT * FROM taskboard.job_events WHERE job_id = %s', :a), 'with its history');
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'a_token'::uuid), false, 'a repeat of it finds no job and answers false');
SELECT is(taskboard.lease_state(:a, :'a_token'::uuid), 'lost', 'lease_state finds no job either');
RESET ROLE;

-- A batch: discarded, kept and refused, each answered -------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qd') AS b1 \gset
SELECT taskboard.enqueue('t', '{}', 'qk') AS k1 \gset
SELECT taskboard.enqueue('t', '{}', 'qd') AS b2 \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS b1_token FROM taskboard.claim('qd', 'w1') \gset
SELECT token AS k1_token FROM taskboard.claim('qk', 'w1') \gset
SELECT token AS b2_token FROM taskboard.claim('qd', 'w1') \gset
SELECT results_eq(
    format($$SELECT job_id, completed FROM taskboard.complete_many(ARRAY[%s, %s, %s, %s]::bigint[],
                                                                   ARRAY[%L, %L, %L, %L]::uuid[])$$,
           :b2, :k1, :b1, :b1, :'b2_token', :'k1_token', :'b1_token', gen_random_uuid()),
    format('VALUES (%s::bigint, true), (%s, true), (%s, true), (%s, false)', :b2, :k1, :b1, :b1),
    'a batch answers each job in input order: two discarded, one kept, a stranger''s token refused');
RESET ROLE;
SELECT is((SELECT pg_catalog.array_agg(id ORDER BY id) FROM taskboard.jobs WHERE id IN (:b1, :b2, :k1)),
    ARRAY[:k1]::bigint[], 'the discarding queue''s jobs are gone, the other queue''s kept');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :k1), 'succeeded', 'kept succeeded');

-- A job another job waits on is kept, and its dependent runs ---------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qd') AS d \gset
SELECT taskboard.enqueue('t', '{}', 'qk', depends_on => ARRAY[:d]::bigint[]) AS dep \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS d_token FROM taskboard.claim('qd', 'w1') \gset
SELECT is(taskboard.complete(:d, :'d_token'::uuid), true, 'a job another waits on completes');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :d), 'succeeded', 'and is kept succeeded, for prune');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :dep), 'queued', 'its dependent is queued');

-- A failure is kept ------------------------------------------------------------------

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qd', max_attempts => 1) AS f \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS f_token FROM taskboard.claim('qd', 'w1') \gset
SELECT is(taskboard.fail(:f, :'f_token'::uuid, 'boom'), 'dead', 'a job of a discarding queue fails for good');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :f), 'dead', 'and is kept dead');

-- Back to keeping, and what a revert would drop ----------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT results_eq($$SELECT data, rows FROM taskboard.revert_losses('0.6.6') WHERE data = 'discarding queues'$$,
    $$VALUES ('discarding queues', 1::bigint)$$, 'a revert to 0.6.6 drops the setting of one queue');
SELECT is(taskboard.set_queue_discard('qd', false), true, 'false keeps the jobs again');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'qd') AS e \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS e_token FROM taskboard.claim('qd', 'w1') \gset
SELECT is(taskboard.complete(:e, :'e_token'::uuid), true, 'a completion of the queue is accepted');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :e), 'succeeded', 'and keeps the job');

SELECT * FROM finish();
ROLLBACK;
