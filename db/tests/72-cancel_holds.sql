-- A cancel under a live lease holds what the holder may still believe it
-- holds: the job keeps its place under its queue's limit and its dedupe key
-- until the lease it was given ends (jobs.held_until). A job enqueued with
-- that key meanwhile is inserted but due no sooner; a retry of the job is
-- due no sooner. A cancel of a queued job (its holder handed it back with
-- release) holds nothing: its retry is due now. Played by the roles
-- involved: a worker holding the job, an administrator cancelling, a
-- producer enqueueing the same key, a second worker claiming. Expiry is
-- made by moving deadlines as the table owner.

BEGIN;
SELECT plan(26);

-- A queue limited to one running job: worker-a holds job a, the admin
-- cancels it, worker-b finds the place still taken.
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit(queue => 'hold-l', max_running => 1);
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'hold-l', priority => 1) AS a_id \gset
SELECT taskboard.enqueue(task => 'report', queue => 'hold-l') AS b_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token, lease_expires_at AS a_deadline
  FROM taskboard.claim(queue => 'hold-l', worker => 'worker-a', lease => '5 minutes') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :a_id), true, 'the administrator cancels the running job a');
RESET ROLE;
SELECT is((SELECT held_until FROM taskboard.jobs WHERE id = :a_id), :'a_deadline'::timestamptz,
          'a job cancelled under a live lease is held until that lease''s deadline');
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim(queue => 'hold-l', worker => 'worker-b')), 0::bigint,
          'a second worker starts nothing while the cancelled job''s lease runs: its place is held');
SELECT is(taskboard.renew(job_id => :a_id, token => :'a_token'), NULL,
          'the holder''s renewal is refused: it learns of the cancel');
RESET ROLE;

-- The lease ends: the place is free.
UPDATE taskboard.jobs
   SET held_until = clock_timestamp() - interval '1 second',
       lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id = :a_id;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT job_id FROM taskboard.claim(queue => 'hold-l', worker => 'worker-b')), :b_id::bigint,
          'once that lease has ended, the second worker starts the next job');
RESET ROLE;

-- A cancel of a running job whose lease had already ended holds nothing.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'hold-e') AS e_id \gset
SELECT taskboard.enqueue(task => 'report', queue => 'hold-e') AS e2_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit(queue => 'hold-e', max_running => 1);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT job_id AS e_claimed FROM taskboard.claim(queue => 'hold-e', worker => 'worker-a') \gset
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :e_claimed;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :e_claimed), true, 'a running job whose lease expired is cancelled');
RESET ROLE;
SELECT is((SELECT held_until FROM taskboard.jobs WHERE id = :e_claimed), NULL,
          'a cancel after the lease ended holds nothing');
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim(queue => 'hold-e', worker => 'worker-b')), 1::bigint,
          'and its place is free at once');
RESET ROLE;

-- The dedupe key: worker-a holds job k (key invoice-9), the admin cancels
-- it, a producer enqueues the same key.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'hold-d', dedupe_key => 'invoice-9') AS k_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT lease_expires_at AS k_deadline
  FROM taskboard.claim(queue => 'hold-d', worker => 'worker-a', lease => '5 minutes') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :k_id), true, 'the administrator cancels the running job k');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'hold-d', dedupe_key => 'invoice-9') AS n_id \gset
SELECT isnt(:n_id::bigint, :k_id::bigint, 'the same key may be enqueued: a new job is inserted');
SELECT is((SELECT run_at FROM taskboard.get_job(job_id => :n_id)), :'k_deadline'::timestamptz,
          'the new job is due when the cancelled job''s lease ends');
SELECT is(taskboard.enqueue(task => 'invoice', queue => 'hold-d', dedupe_key => 'invoice-9'), :n_id::bigint,
          'the new job holds the key for the next enqueue');
SELECT taskboard.enqueue(task => 'invoice', queue => 'hold-d', dedupe_key => 'invoice-10') AS other_id \gset
RESET ROLE;
SELECT ok((SELECT run_at <= clock_timestamp() FROM taskboard.jobs WHERE id = :other_id),
          'another key is due at once');
SET LOCAL ROLE taskboard_worker;
SELECT is(ARRAY(SELECT job_id FROM taskboard.claim(queue => 'hold-d', worker => 'worker-b', batch => 10)),
          ARRAY[:other_id::bigint],
          'a second worker does not start the job with the held key before that lease ends');
RESET ROLE;

-- enqueue_many defers a held key too, and only it.
UPDATE taskboard.jobs SET state = 'cancelled', finished_at = clock_timestamp() WHERE id = :n_id;
SET LOCAL ROLE taskboard_producer;
SELECT array_agg(id) AS many_ids
  FROM taskboard.enqueue_many(task => 'invoice', queue => 'hold-d',
                              payloads => ARRAY['{}', '{}']::jsonb[],
                              dedupe_keys => ARRAY['invoice-9', 'invoice-11']) AS id \gset
RESET ROLE;
SELECT is((SELECT run_at FROM taskboard.jobs WHERE id = (:'many_ids'::bigint[])[1]), :'k_deadline'::timestamptz,
          'enqueue_many: a job with a held key is due when that lease ends');
SELECT ok((SELECT run_at <= clock_timestamp() FROM taskboard.jobs WHERE id = (:'many_ids'::bigint[])[2]),
          'enqueue_many: a job with a free key is due at once');

-- Once the lease has ended, the job with the key starts.
UPDATE taskboard.jobs
   SET held_until = clock_timestamp() - interval '1 second',
       lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id = :k_id;
UPDATE taskboard.jobs SET run_at = clock_timestamp() - interval '1 second'
 WHERE id = (:'many_ids'::bigint[])[1];
SET LOCAL ROLE taskboard_worker;
SELECT ok((:'many_ids'::bigint[])[1] IN (SELECT job_id FROM taskboard.claim(queue => 'hold-d', worker => 'worker-b', batch => 10)),
          'once that lease has ended, the job with the key starts');
RESET ROLE;

-- retry: a job cancelled while queued, after its holder handed it back with
-- release, is due now, although its old lease has hours to run.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'hold-r') AS r_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS r_token FROM taskboard.claim(queue => 'hold-r', worker => 'worker-a', lease => '12 hours') \gset
SELECT is(taskboard.release(job_id => :r_id, token => :'r_token'), true, 'the holder hands job r back');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(job_id => :r_id), true, 'the administrator cancels the queued job r');
SELECT clock_timestamp() AS t0 \gset
SELECT is(taskboard.retry(job_id => :r_id), true, 'and retries it');
SELECT clock_timestamp() AS t1 \gset
RESET ROLE;
SELECT ok((SELECT run_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz FROM taskboard.jobs WHERE id = :r_id),
          'a job cancelled while queued is due now on retry, not when its old lease would end');

-- retry: a job cancelled while running under a live lease, retried, is due
-- at that lease's end and still holds its place under the limit until then.
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.set_queue_limit(queue => 'hold-q', max_running => 1);
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'report', queue => 'hold-q', priority => 1) AS q_id \gset
SELECT taskboard.enqueue(task => 'report', queue => 'hold-q') AS q2_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT lease_expires_at AS q_deadline
  FROM taskboard.claim(queue => 'hold-q', worker => 'worker-a', lease => '5 minutes') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(job_id => :q_id);
SELECT is(taskboard.retry(job_id => :q_id), true, 'the administrator retries the job cancelled while running');
RESET ROLE;
SELECT is((SELECT run_at FROM taskboard.jobs WHERE id = :q_id), :'q_deadline'::timestamptz,
          'a job cancelled under a live lease is due on retry when that lease ends');
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim(queue => 'hold-q', worker => 'worker-b')), 0::bigint,
          'retried and not yet due, it still holds its place under the limit');
RESET ROLE;

-- retry of another job with the held key: due when that lease ends too.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'hold-k', dedupe_key => 'rk') AS p_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT lease_expires_at AS p_deadline
  FROM taskboard.claim(queue => 'hold-k', worker => 'worker-a', lease => '5 minutes') \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(job_id => :p_id);
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'hold-k', dedupe_key => 'rk') AS m_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT taskboard.cancel(job_id => :m_id);
SELECT is(taskboard.retry(job_id => :m_id), true, 'a job with a held key, cancelled while queued, is retried');
RESET ROLE;
SELECT is((SELECT run_at FROM taskboard.jobs WHERE id = :m_id), :'p_deadline'::timestamptz,
          'its retry is due when the lease of the job holding its key ends');

SELECT * FROM finish();
ROLLBACK;
