-- complete_many(job_ids, tokens, results): complete for many jobs in one
-- statement. Each row is fenced on its own token and answers for its own
-- job, in input order; results pair with job_ids element by element; a
-- refused job changes nothing.
-- (Lock ordering between two sessions is tested in pytest.)

BEGIN;
SELECT plan(20);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-a') AS a_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-b') AS b_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-s') AS s_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-d') AS d_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-x') AS x_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-c') AS c_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim(queue => 'complete_many-a', worker => 'worker-a') WHERE job_id = :a_id \gset
SELECT token AS b_token FROM taskboard.claim(queue => 'complete_many-b', worker => 'worker-a') WHERE job_id = :b_id \gset
SELECT token AS s_stale FROM taskboard.claim(queue => 'complete_many-s', worker => 'worker-a') WHERE job_id = :s_id \gset
SELECT token AS d_token FROM taskboard.claim(queue => 'complete_many-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT token AS x_token FROM taskboard.claim(queue => 'complete_many-x', worker => 'worker-a') WHERE job_id = :x_id \gset
SELECT token AS c_token FROM taskboard.claim(queue => 'complete_many-c', worker => 'worker-a') WHERE job_id = :c_id \gset
RESET ROLE;

-- s: expired and reclaimed by worker B; x: expired, nobody reclaimed it;
-- d: already completed by its holder; c: cancelled while running.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs
   SET lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id IN (:s_id, :x_id);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS s_token FROM taskboard.claim(queue => 'complete_many-s', worker => 'worker-b') WHERE job_id = :s_id \gset
SELECT ok(taskboard.complete(job_id => :d_id, token => :'d_token', result => '{"first": true}'),
          'the holder completes job d on its own');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(job_id => :c_id), 'an administrator cancels running job c');
RESET ROLE;

SELECT jsonb_object_agg(id, to_jsonb(j)) AS refused_rows
  FROM taskboard.jobs AS j
 WHERE id IN (:s_id, :d_id, :c_id) \gset

-- One call, deliberately not in job_id order.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT jsonb_agg(jsonb_build_object('job_id', r.job_id, 'completed', r.completed) ORDER BY r.ord) AS answer
  FROM taskboard.complete_many(
           job_ids => ARRAY[:s_id, :b_id, :d_id, :unknown_id, :a_id, :x_id, :c_id]::bigint[],
           tokens  => ARRAY[:'s_stale', :'b_token', :'d_token', gen_random_uuid()::text,
                            :'a_token', :'x_token', :'c_token']::uuid[],
           results => ARRAY['{"r": "s"}', '{"r": "b"}', '{"r": "d again"}', '{"r": "u"}',
                            '{"r": "a"}', '{"r": "x"}', '{"r": "c"}']::jsonb[])
       WITH ORDINALITY AS r(job_id, completed, ord) \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is(ARRAY(SELECT (e.x->>'job_id')::bigint
                  FROM jsonb_array_elements(:'answer'::jsonb) WITH ORDINALITY AS e(x, o)
                 ORDER BY e.o),
          ARRAY[:s_id, :b_id, :d_id, :unknown_id, :a_id, :x_id, :c_id]::bigint[],
          'complete_many answers one row per input job, in input order');
SELECT is(ARRAY(SELECT (e.x->>'completed')::boolean
                  FROM jsonb_array_elements(:'answer'::jsonb) WITH ORDINALITY AS e(x, o)
                 ORDER BY e.o),
          ARRAY[false, true, true, false, true, true, false],
          'each row answers for its own token: stale, unknown and cancelled false; current, expired-but-current and already completed true');
SELECT is((SELECT jsonb_object_agg(id, result) FROM taskboard.jobs WHERE id IN (:a_id, :b_id, :x_id)),
          jsonb_build_object(:'a_id', '{"r": "a"}'::jsonb, :'b_id', '{"r": "b"}'::jsonb, :'x_id', '{"r": "x"}'::jsonb),
          'each completed job gets the result at its own position');
SELECT ok((SELECT bool_and(state = 'succeeded'
                           AND finished_at BETWEEN :'t0'::timestamptz AND :'t1'::timestamptz)
                  AND count(*) = 3
             FROM taskboard.jobs WHERE id IN (:a_id, :b_id, :x_id)),
          'the completed jobs are succeeded with finished_at from the server clock');
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:s_id, :d_id, :c_id)),
          :'refused_rows'::jsonb,
          'the stale, repeated and cancelled rows change nothing (d keeps its first result and finished_at)');

-- The same job twice: A's stale token, then B's current one.
SET LOCAL ROLE taskboard_worker;
SELECT jsonb_agg(r.completed ORDER BY r.ord) AS answer
  FROM taskboard.complete_many(
           job_ids => ARRAY[:s_id, :s_id]::bigint[],
           tokens  => ARRAY[:'s_stale', :'s_token']::uuid[],
           results => ARRAY['{"by": "A"}', '{"by": "B"}']::jsonb[])
       WITH ORDINALITY AS r(job_id, completed, ord) \gset
RESET ROLE;
SELECT is(:'answer'::jsonb, '[false, true]'::jsonb,
          'beside the current token for the same job, the stale token is still refused');
SELECT is((SELECT jsonb_build_object('state', state, 'result', result) FROM taskboard.jobs WHERE id = :s_id),
          '{"state": "succeeded", "result": {"by": "B"}}'::jsonb,
          'the job is succeeded with the current holder''s result only');

-- results NULL: every result is NULL.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-n', priority => 1) AS g_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-n') AS h_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS g_token FROM taskboard.claim(queue => 'complete_many-n', worker => 'worker-a') WHERE job_id = :g_id \gset
SELECT token AS h_token FROM taskboard.claim(queue => 'complete_many-n', worker => 'worker-a') WHERE job_id = :h_id \gset
SELECT is(ARRAY(SELECT completed
                  FROM taskboard.complete_many(job_ids => ARRAY[:h_id, :g_id]::bigint[],
                                               tokens  => ARRAY[:'h_token', :'g_token']::uuid[]))
          , ARRAY[true, true],
          'complete_many without results completes each job');
RESET ROLE;
SELECT is((SELECT count(*) FROM taskboard.jobs
            WHERE id IN (:g_id, :h_id) AND state = 'succeeded' AND result IS NULL),
          2::bigint,
          'without results every job succeeds with a NULL result');

-- Empty input.
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.complete_many(job_ids => '{}'::bigint[], tokens => '{}'::uuid[])$$,
                'complete_many of empty arrays returns no rows');
RESET ROLE;

-- Bad input, presented with current tokens: nothing may complete.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-k') AS k_id \gset
SELECT taskboard.enqueue(task => 'thumbnail', queue => 'complete_many-l') AS l_id \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS k_token FROM taskboard.claim(queue => 'complete_many-k', worker => 'worker-a') WHERE job_id = :k_id \gset
SELECT token AS l_token FROM taskboard.claim(queue => 'complete_many-l', worker => 'worker-a') WHERE job_id = :l_id \gset
RESET ROLE;
SELECT jsonb_object_agg(id, to_jsonb(j)) AS kl_rows FROM taskboard.jobs AS j WHERE id IN (:k_id, :l_id) \gset

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s, %s]::bigint[], tokens => ARRAY[%L]::uuid[])$$,
                        :k_id, :l_id, :'k_token'),
                 '22023', NULL, 'complete_many rejects more job_ids than tokens');
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L, %L]::uuid[])$$,
                        :k_id, :'k_token', :'l_token'),
                 '22023', NULL, 'complete_many rejects more tokens than job_ids');
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s, %s]::bigint[], tokens => ARRAY[%L, %L]::uuid[], results => ARRAY['{}']::jsonb[])$$,
                        :k_id, :l_id, :'k_token', :'l_token'),
                 '22023', NULL, 'complete_many rejects fewer results than jobs');
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[], results => ARRAY['{}', '{}']::jsonb[])$$,
                        :k_id, :'k_token'),
                 '22023', NULL, 'complete_many rejects more results than jobs');
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => NULL, tokens => ARRAY[%L]::uuid[])$$,
                        :'k_token'),
                 '22023', NULL, 'complete_many rejects NULL job_ids');
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s]::bigint[], tokens => NULL)$$,
                        :k_id),
                 '22023', NULL, 'complete_many rejects NULL tokens');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT * FROM taskboard.complete_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[])$$,
                        :k_id, :'k_token'),
                 '42501', NULL, 'a producer may not complete jobs');
RESET ROLE;
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j)) FROM taskboard.jobs AS j WHERE id IN (:k_id, :l_id)),
          :'kl_rows'::jsonb,
          'rejected calls complete nothing');

SELECT * FROM finish();
ROLLBACK;
