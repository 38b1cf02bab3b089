-- prune(older_than, batch): deletes up to `batch` finished jobs (succeeded,
-- cancelled, dead) whose finished_at is before clock - older_than, oldest
-- first, and returns how many. Administrators and workers (for their
-- retention setting); producers may not.
--
-- The old jobs here finished more than ten years ago (finished_at moved as
-- the owner) and are pruned with older_than = 3650 days, so that finished
-- jobs someone else left in the database cannot change the counts.

BEGIN;
SELECT plan(29);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-s') AS s_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-c') AS c_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-d', max_attempts => 1) AS d_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-n1') AS n1_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-n2') AS n2_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-q', run_at => clock_timestamp() - interval '3660 days') AS q_id \gset
SELECT taskboard.enqueue(task => 'cleanup', queue => 'prune-r') AS r_id \gset
RESET ROLE;

-- s succeeded, c cancelled, d dead, n1 and n2 succeeded; q stays queued, r running.
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'prune-s', worker => 'worker-a') WHERE job_id = :s_id \gset
SELECT token AS d_token FROM taskboard.claim(queue => 'prune-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT token AS n1_token FROM taskboard.claim(queue => 'prune-n1', worker => 'worker-a') WHERE job_id = :n1_id \gset
SELECT token AS n2_token FROM taskboard.claim(queue => 'prune-n2', worker => 'worker-a') WHERE job_id = :n2_id \gset
SELECT token AS r_token FROM taskboard.claim(queue => 'prune-r', worker => 'worker-a') WHERE job_id = :r_id \gset
SELECT ok(taskboard.complete(job_id => :s_id, token => :'s_token'), 'job s succeeds');
SELECT is(taskboard.fail(job_id => :d_id, token => :'d_token', error => 'gone'), 'dead', 'job d dies');
SELECT ok(taskboard.complete(job_id => :n1_id, token => :'n1_token'), 'job n1 succeeds');
SELECT ok(taskboard.complete(job_id => :n2_id, token => :'n2_token'), 'job n2 succeeds');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'job c is cancelled');
RESET ROLE;

-- Oldest first: d, then c, then s, all past the cutoff; n1 just inside it.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs
   SET finished_at = clock_timestamp() - interval '3650 days'
                     - CASE id WHEN :d_id THEN interval '3 hours'
                               WHEN :c_id THEN interval '2 hours'
                               WHEN :s_id THEN interval '1 hour' END
 WHERE id IN (:d_id, :c_id, :s_id);
UPDATE taskboard.jobs SET finished_at = clock_timestamp() - interval '3649 days' WHERE id = :n1_id;
RESET ROLE;

-- Administrators and workers may prune, producers not; bad input is rejected.
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.prune(older_than => '3650 days')$$,
                 '42501', NULL, 'a producer may not prune');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.prune(older_than => '36500 days'), 0::bigint,
          'an admin may prune (nothing finished a century ago here)');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.prune(older_than => NULL)$$,
                 '22023', NULL, 'prune rejects a NULL older_than');
SELECT throws_ok($$SELECT taskboard.prune(older_than => '-1 day')$$,
                 '22023', NULL, 'prune rejects a negative older_than');
SELECT throws_ok($$SELECT taskboard.prune(older_than => '100 years 1 day')$$,
                 '22023', NULL, 'prune rejects an older_than over 100 years, past which clock - older_than leaves the calendar');
SELECT lives_ok($$SELECT taskboard.prune(older_than => '100 years')$$,
                'prune takes an older_than of 100 years');
SELECT throws_ok($$SELECT taskboard.prune(older_than => '3650 days', batch => 0)$$,
                 '22023', NULL, 'prune rejects a batch of 0');
SELECT throws_ok($$SELECT taskboard.prune(older_than => '3650 days', batch => -5)$$,
                 '22023', NULL, 'prune rejects a negative batch');
SELECT throws_ok($$SELECT taskboard.prune(older_than => '3650 days', batch => NULL)$$,
                 '22023', NULL, 'prune rejects a NULL batch');
RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.jobs WHERE id IN (:s_id, :c_id, :d_id, :n1_id, :n2_id, :q_id, :r_id)),
          7::bigint, 'rejected prunes delete nothing');

-- Batches, oldest first, until 0.
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.prune(older_than => '3650 days', batch => 1), 1::bigint,
          'prune deletes at most batch jobs and returns how many');
RESET ROLE;
SELECT is(ARRAY(SELECT id FROM taskboard.jobs WHERE id IN (:s_id, :c_id, :d_id) ORDER BY id),
          ARRAY(SELECT unnest(ARRAY[:s_id, :c_id]::bigint[]) ORDER BY 1),
          'the first batch took the oldest finished job (dead d)');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.prune(older_than => '3650 days', batch => 1), 1::bigint,
          'the next call deletes the next batch');
RESET ROLE;
SELECT is(ARRAY(SELECT id FROM taskboard.jobs WHERE id IN (:s_id, :c_id, :d_id)),
          ARRAY[:s_id]::bigint[],
          'the second batch took the next oldest (cancelled c)');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.prune(older_than => '3650 days', batch => 5), 1::bigint,
          'a batch larger than what is left deletes what is left (succeeded s)');
SELECT is(taskboard.prune(older_than => '3650 days', batch => 5), 0::bigint,
          'prune returns 0 once nothing old enough is left');
RESET ROLE;
SELECT is(ARRAY(SELECT id FROM taskboard.jobs WHERE id IN (:n1_id, :n2_id, :q_id, :r_id) ORDER BY id),
          ARRAY(SELECT unnest(ARRAY[:n1_id, :n2_id, :q_id, :r_id]::bigint[]) ORDER BY 1),
          'jobs finished after the cutoff, and unfinished jobs however old, are kept');

-- older_than 0: every finished job, never a queued or running one.
SET LOCAL ROLE taskboard_admin;
SELECT cmp_ok(taskboard.prune(older_than => '0 seconds'), '>=', 2::bigint,
              'prune with older_than 0 and the default batch deletes every finished job');
RESET ROLE;
SELECT is(ARRAY(SELECT id FROM taskboard.jobs WHERE id IN (:n1_id, :n2_id, :q_id, :r_id) ORDER BY id),
          ARRAY(SELECT unnest(ARRAY[:q_id, :r_id]::bigint[]) ORDER BY 1),
          'prune never deletes a queued or running job');

-- older_than bounded by the cutoff it gives ---------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_like($$SELECT taskboard.prune('-12000 mon 360000 days')$$,
    'older_than must not be NULL or negative, got %', 'an admin cannot prune with a cutoff years ahead of the clock');
SELECT throws_like($$SELECT taskboard.prune('300000 years')$$,
    'older_than must be at most 100 years, got %', 'a huge older_than is refused with 22023');
RESET ROLE;

-- A job cancelled under a live lease is kept while it holds its place -----------

SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit(queue => 'prune-held', max_running => 1);
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'prune-held', priority => 1) AS h_id \gset
SELECT taskboard.enqueue(task => 'report', queue => 'prune-held') AS h2_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT count(*) FROM taskboard.claim(queue => 'prune-held', worker => 'worker-a', lease => '5 minutes');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(job_id => :h_id);
SELECT is(taskboard.prune(older_than => '0 seconds'), 0::bigint,
          'prune keeps a job cancelled under a live lease (held_until ahead)');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim(queue => 'prune-held', worker => 'worker-b')), 0::bigint,
          'after a prune, the cancelled job still holds its place under the limit');
RESET ROLE;
UPDATE taskboard.jobs SET held_until = clock_timestamp() - interval '1 second' WHERE id = :h_id;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.prune(older_than => '0 seconds'), 1::bigint,
          'once its lease has ended, the cancelled job is pruned');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
