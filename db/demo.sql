-- The story from DESIGN.md, step by step, in plain SQL.
-- Run by `make demo` on a freshly deployed database, connected as a role that
-- may SET ROLE to every taskboard role (a superuser may): each step takes the
-- role of whoever makes that call.

\set QUIET on
\pset footer off
\pset null '(null)'

\echo
\echo '1. The application enqueues Maya''s welcome email (as taskboard_producer).'
SET ROLE taskboard_producer;
SELECT taskboard.enqueue(task    => 'send_email',
                         payload => '{"to": "maya@example.com", "template": "welcome"}',
                         queue   => 'email') AS job_id \gset
SELECT job_id, queue, task, state, attempt, max_attempts
  FROM taskboard.get_job(job_id => :job_id);

\echo '2. Worker A claims it with a 60-second lease (as taskboard_worker).'
\echo '   Its token (claim_a) is A''s proof of holding the job: only claim returns it.'
SET ROLE taskboard_worker;
SELECT job_id AS a_job, token AS claim_a, attempt AS a_attempt, lease_expires_at AS a_deadline
  FROM taskboard.claim(queue => 'email', worker => 'worker-a', lease => '60 seconds') \gset
SELECT :a_job AS job_id, 'worker-a' AS worker, :'claim_a' AS claim_a, :a_attempt AS attempt,
       date_trunc('second', :'a_deadline'::timestamptz - clock_timestamp() + interval '0.5 s') AS lease_left,
       taskboard.lease_state(job_id => :job_id, token => :'claim_a') AS lease_state;

\echo '3. Worker A stalls (a GC pause, a network partition). Nobody renews its lease.'
\echo '   After 60 s the server clock passes the deadline. The demo does not wait:'
\echo '   as taskboard_owner it moves the deadline into the past, which is what the'
\echo '   clock would do a minute later.'
RESET ROLE;
SET ROLE taskboard_owner;
UPDATE taskboard.jobs
   SET lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id = :job_id;
SET ROLE taskboard_worker;
SELECT taskboard.lease_state(job_id => :job_id, token => :'claim_a') AS "A's lease_state";

\echo '4. Worker B claims from the same queue and gets the expired job: attempt 2,'
\echo '   with a new token (claim_b). A''s token is no longer current.'
SELECT job_id AS b_job, token AS claim_b, attempt AS b_attempt
  FROM taskboard.claim(queue => 'email', worker => 'worker-b', lease => '60 seconds') \gset
SELECT :b_job AS job_id, 'worker-b' AS worker, :'claim_b' AS claim_b, :b_attempt AS attempt,
       :'claim_b' <> :'claim_a' AS "claim_b <> claim_a";

\echo '5. B sends the email and completes the job with its token.'
SELECT taskboard.complete(job_id => :job_id, token => :'claim_b',
                          result => '{"sent_by": "worker-b"}') AS "B's complete";

\echo '6. A wakes up and carries on with claim_a. Each call matches no row:'
\echo '   complete answers false, renew and fail answer NULL, lease_state says lost.'
SELECT taskboard.complete(job_id => :job_id, token => :'claim_a',
                          result => '{"sent_by": "worker-a"}') AS complete,
       taskboard.renew(job_id => :job_id, token => :'claim_a') AS renew,
       taskboard.fail(job_id => :job_id, token => :'claim_a', error => 'woke up late') AS fail,
       taskboard.lease_state(job_id => :job_id, token => :'claim_a') AS lease_state;

\echo '7. What the application sees (get_job, as taskboard_producer): succeeded once,'
\echo '   on attempt 2, with B''s result, and no trace of A''s late writes.'
SET ROLE taskboard_producer;
\x on
SELECT job_id, queue, task, state, attempt, result, errors,
       finished_at IS NOT NULL AS finished
  FROM taskboard.get_job(job_id => :job_id);
\x off
RESET ROLE;

\echo 'What the fence promises, and what it cannot.'
\echo '  The database state is fenced: once B reclaimed the job, nothing A did could'
\echo '  change it. A''s completion returned false, so A knows not to report success,'
\echo '  and rolls back, instead of committing, rows it wrote in the same transaction.'
\echo '  An email is not database state. If A had already handed Maya''s email to'
\echo '  SMTP before it stalled, she gets two: the database cannot un-send it.'
\echo '  Taskboard narrows that window (a worker can ask lease_state right before'
\echo '  sending, and every attempt carries the same idempotency_key for APIs that'
\echo '  honour one); it never promises exactly-once external effects.'
\echo
