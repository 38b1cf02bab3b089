-- full_keys(queue, max_running_per_key, clock): the bound of claim's pickers
-- under a key limit, called directly. The concurrency keys of the queue
-- whose holders fill the limit by `clock`: a holder is a running job (an
-- expired lease counts until its job is reclaimed or finished) or one
-- cancelled under a lease not yet ended; queued and finished jobs, jobs
-- without a key and other queues' jobs hold nothing. It writes nothing.
-- Internal: the application roles cannot call it; claim does
-- (23-claim_key_limit, 23b-claim_key_limit_more).

BEGIN;
SELECT plan(9);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.full_keys('fk', 1, now())$$, '42501', NULL,
    'an admin cannot call full_keys');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.full_keys('fk', 1, now())$$, '42501', NULL,
    'a worker cannot call full_keys');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- Key a: a live lease and an expired one. Key b: a live lease and a job
-- cancelled under a lease with an hour left. Key c: a live lease and a
-- succeeded job. Key d: a job cancelled under a lease that has ended, and a
-- queued one. Key e: queued jobs only. Three running jobs without a key, and
-- two running of key x in another queue.
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'a') AS a_live \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'a') AS a_expired \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'b') AS b_live \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'b') AS b_held \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'c') AS c_live \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'c') AS c_done \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'd') AS d_ended \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'd') AS d_queued \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'e') AS e1 \gset
SELECT taskboard.enqueue(task => 't', queue => 'fk', concurrency_key => 'e') AS e2 \gset
SELECT array_agg(taskboard.enqueue(task => 't', queue => 'fk')) AS nokey FROM generate_series(1, 3) \gset
SELECT array_agg(taskboard.enqueue(task => 't', queue => 'fk-other', concurrency_key => 'x')) AS x
  FROM generate_series(1, 2) \gset

UPDATE taskboard.jobs
   SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'w-old',
       started_at = now() - interval '10 minutes',
       lease_expires_at = CASE WHEN id = :a_expired THEN now() - interval '1 second'
                               ELSE now() + interval '1 hour' END
 WHERE id IN (:a_live, :a_expired, :b_live, :c_live)
    OR id = ANY (:'nokey'::bigint[]) OR id = ANY (:'x'::bigint[]);
UPDATE taskboard.jobs
   SET state = 'cancelled', finished_at = now(),
       held_until = CASE WHEN id = :b_held THEN now() + interval '1 hour' ELSE now() - interval '1 second' END
 WHERE id IN (:b_held, :d_ended);
UPDATE taskboard.jobs SET state = 'succeeded', finished_at = now(), held_until = NULL WHERE id = :c_done;

CREATE TEMP TABLE before AS SELECT * FROM taskboard.jobs WHERE queue = 'fk';

-- The keys, sorted: the function gives them in no set order.
CREATE FUNCTION pg_temp.sorted(keys text[]) RETURNS text[] LANGUAGE sql
AS $$SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM unnest(keys) AS k$$;

SELECT is(pg_temp.sorted(taskboard.full_keys('fk', 2, now())), '{a,b}'::text[],
    'at 2 a key, a (a live and an expired lease) and b (a live lease and a held cancel) are full');
SELECT is(pg_temp.sorted(taskboard.full_keys('fk', 1, now())), '{a,b,c}'::text[],
    'at 1 a key, c (one live lease) is full too; not d (its cancel has ended) nor e (queued only)');
SELECT is(taskboard.full_keys('fk', 3, now()), '{}'::text[],
    'at 3 a key no key is full');
SELECT is(pg_temp.sorted(taskboard.full_keys('fk', 2, now() + interval '2 hours')), '{a}'::text[],
    'two hours on, b''s cancelled lease has ended; a''s leases, both expired, still hold it');
SELECT is(taskboard.full_keys('fk-other', 3, now()), '{}'::text[],
    'another queue''s two holders do not fill a limit of 3');
SELECT is(taskboard.full_keys('fk-other', 2, now()), '{x}'::text[],
    'and fill its own limit of 2, never counted with this queue''s');

SELECT is((SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM taskboard.jobs WHERE queue = 'fk') AS d),
          0::bigint,
    'full_keys leaves every job of the queue as it was');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
