-- discard_held(job_ids, tokens): complete_many's delete for the jobs of
-- discarding queues, called directly. It deletes each job running under its
-- given token in a queue that discards, unless a job waits on it, answers
-- each with its token, and leaves every other job as it was. Internal: the
-- application roles cannot call it; complete_many does (89e-set_queue_discard).

BEGIN;
SELECT plan(7);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT * FROM taskboard.discard_held('{1}', '{00000000-0000-0000-0000-000000000000}')$$,
    '42501', NULL, 'an admin cannot call discard_held');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.discard_held('{1}', '{00000000-0000-0000-0000-000000000000}')$$,
    '42501', NULL, 'a worker cannot call discard_held');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT taskboard.enqueue(task => 't', queue => 'dh') AS a \gset
SELECT taskboard.enqueue(task => 't', queue => 'dh') AS b \gset
SELECT taskboard.enqueue(task => 't', queue => 'dh') AS c \gset
SELECT taskboard.enqueue(task => 't', queue => 'dh') AS w \gset
SELECT taskboard.enqueue(task => 't', queue => 'kept') AS k \gset
SELECT taskboard.enqueue(task => 't', queue => 'dh-kids', depends_on => ARRAY[:w]::bigint[]) AS kid \gset
UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w',
       started_at = now(), lease_expires_at = now() + interval '1 minute'
 WHERE id IN (:a, :b, :c, :w, :k);
SELECT lease_token AS ta FROM taskboard.jobs WHERE id = :a \gset
SELECT lease_token AS tb FROM taskboard.jobs WHERE id = :b \gset
SELECT lease_token AS tw FROM taskboard.jobs WHERE id = :w \gset
SELECT lease_token AS tk FROM taskboard.jobs WHERE id = :k \gset

SELECT is_empty(format($$SELECT * FROM taskboard.discard_held(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :a, :'ta'),
    'with no queue discarding, it deletes nothing');
INSERT INTO taskboard.queues (queue, discard_succeeded) VALUES ('dh', true);

-- a and b under their tokens, c under a token it does not hold, w waited on,
-- k of a queue that keeps its jobs.
SELECT results_eq(
    format($$SELECT job_id, token FROM taskboard.discard_held(ARRAY[%s, %s, %s, %s, %s]::bigint[],
                                                              ARRAY[%L, %L, %L, %L, %L]::uuid[]) ORDER BY job_id$$,
           :b, :a, :c, :w, :k, :'tb', :'ta', gen_random_uuid(), :'tw', :'tk'),
    format($$VALUES (%s::bigint, %L::uuid), (%s, %L)$$, :a, :'ta', :b, :'tb'),
    'discard_held answers the jobs it deleted, each with the token that held it');
SELECT is(
    ARRAY(SELECT id || ' ' || state FROM taskboard.jobs WHERE queue IN ('dh', 'kept') ORDER BY id),
    ARRAY[:c || ' running', :w || ' running', :k || ' running'],
    'a stranger''s token, a job waited on and a kept queue''s job are left as they were');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :kid), 'waiting', 'the dependent still waits');
SELECT is_empty(format($$SELECT * FROM taskboard.discard_held(ARRAY[%s]::bigint[], ARRAY[%L]::uuid[])$$, :a, :'ta'),
    'a job already deleted is not answered again');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
