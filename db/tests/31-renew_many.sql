-- renew_many(job_ids, tokens, lease): renew for many jobs in one statement.
-- One row per input element, in input order, with the new deadline or NULL
-- where renewal was refused; refused jobs change nothing.
-- (Lock ordering between two sessions is tested in pytest.)

BEGIN;
SELECT plan(21);

SELECT coalesce(max(id), 0) + 1000000 AS unknown_id FROM taskboard.jobs \gset

-- Six jobs, each in its own queue so that every claim takes the job meant.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-a') AS a_id \gset
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-b') AS b_id \gset
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-c') AS c_id \gset
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-d') AS d_id \gset
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-e') AS e_id \gset
SELECT taskboard.enqueue(task => 'ping', queue => 'renew_many-f') AS f_id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS a_token FROM taskboard.claim(queue => 'renew_many-a', worker => 'worker-a') WHERE job_id = :a_id \gset
SELECT token AS b_stale FROM taskboard.claim(queue => 'renew_many-b', worker => 'worker-a') WHERE job_id = :b_id \gset
SELECT token AS c_token FROM taskboard.claim(queue => 'renew_many-c', worker => 'worker-a') WHERE job_id = :c_id \gset
SELECT token AS d_token FROM taskboard.claim(queue => 'renew_many-d', worker => 'worker-a') WHERE job_id = :d_id \gset
SELECT token AS e_token FROM taskboard.claim(queue => 'renew_many-e', worker => 'worker-a') WHERE job_id = :e_id \gset
SELECT token AS f_token FROM taskboard.claim(queue => 'renew_many-f', worker => 'worker-a') WHERE job_id = :f_id \gset
RESET ROLE;

-- b: expired and reclaimed by worker B (A's token is stale);
-- c: expired, nobody reclaimed it; d: completed by its holder.
SET LOCAL ROLE taskboard_owner;
UPDATE taskboard.jobs
   SET lease_expires_at = clock_timestamp() - interval '1 second'
 WHERE id IN (:b_id, :c_id);
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT token AS b_token FROM taskboard.claim(queue => 'renew_many-b', worker => 'worker-b') WHERE job_id = :b_id \gset
SELECT ok(taskboard.complete(job_id => :d_id, token => :'d_token'), 'the holder completes job d');
RESET ROLE;

SELECT jsonb_object_agg(id, to_jsonb(j)) AS refused_rows
  FROM taskboard.jobs AS j
 WHERE id IN (:b_id, :c_id, :d_id, :e_id) \gset

-- Input deliberately not in job_id order; e is presented with a random token.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT jsonb_agg(jsonb_build_object('job_id', r.job_id, 'deadline', r.lease_expires_at) ORDER BY r.ord) AS answer
  FROM taskboard.renew_many(
           job_ids => ARRAY[:c_id, :f_id, :unknown_id, :e_id, :b_id, :a_id, :d_id]::bigint[],
           tokens  => ARRAY[:'c_token', :'f_token', gen_random_uuid()::text, gen_random_uuid()::text,
                            :'b_stale', :'a_token', :'d_token']::uuid[],
           lease   => '5 minutes')
       WITH ORDINALITY AS r(job_id, lease_expires_at, ord) \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset

SELECT is(ARRAY(SELECT (e.x->>'job_id')::bigint
                  FROM jsonb_array_elements(:'answer'::jsonb) WITH ORDINALITY AS e(x, o)
                 ORDER BY e.o),
          ARRAY[:c_id, :f_id, :unknown_id, :e_id, :b_id, :a_id, :d_id]::bigint[],
          'renew_many answers one row per input job, in input order');
SELECT is(ARRAY(SELECT e.x->'deadline' <> 'null'::jsonb
                  FROM jsonb_array_elements(:'answer'::jsonb) WITH ORDINALITY AS e(x, o)
                 ORDER BY e.o),
          ARRAY[false, true, false, false, false, true, false],
          'only the current tokens of live leases are renewed; expired, unknown, random, stale and completed get NULL');
SELECT ok((SELECT bool_and((e.x->>'deadline')::timestamptz
                           BETWEEN :'t0'::timestamptz + interval '5 minutes'
                               AND :'t1'::timestamptz + interval '5 minutes')
             FROM jsonb_array_elements(:'answer'::jsonb) AS e(x)
            WHERE (e.x->>'job_id')::bigint IN (:a_id, :f_id)),
          'each renewed deadline is the server clock plus the lease');
SELECT is((SELECT jsonb_object_agg(id, lease_expires_at)
             FROM taskboard.jobs WHERE id IN (:a_id, :f_id)),
          (SELECT jsonb_object_agg(e.x->>'job_id', e.x->'deadline')
             FROM jsonb_array_elements(:'answer'::jsonb) AS e(x)
            WHERE (e.x->>'job_id')::bigint IN (:a_id, :f_id)),
          'renew_many stores the deadlines it returns');
SELECT is((SELECT jsonb_object_agg(id, to_jsonb(j))
             FROM taskboard.jobs AS j WHERE id IN (:b_id, :c_id, :d_id, :e_id)),
          :'refused_rows'::jsonb,
          'the jobs whose renewal was refused are unchanged (b keeps worker B''s lease)');

-- The same job twice: A's stale token and B's current one.
SELECT clock_timestamp() AS t0 \gset
SET LOCAL ROLE taskboard_worker;
SELECT jsonb_agg(jsonb_build_object('job_id', r.job_id, 'deadline', r.lease_expires_at) ORDER BY r.ord) AS answer
  FROM taskboard.renew_many(
           job_ids => ARRAY[:b_id, :b_id]::bigint[],
           tokens  => ARRAY[:'b_stale', :'b_token']::uuid[])
       WITH ORDINALITY AS r(job_id, lease_expires_at, ord) \gset
RESET ROLE;
SELECT clock_timestamp() AS t1 \gset
SELECT is(:'answer'::jsonb->0->'deadline', 'null'::jsonb,
          'a stale token beside the current one for the same job is still refused');
SELECT ok((:'answer'::jsonb->1->>'deadline')::timestamptz
              BETWEEN :'t0'::timestamptz + interval '60 seconds'
                  AND :'t1'::timestamptz + interval '60 seconds',
          'the current token in the same call renews by the default 60 seconds');
SELECT is((SELECT lease_expires_at FROM taskboard.jobs WHERE id = :b_id),
          (:'answer'::jsonb->1->>'deadline')::timestamptz,
          'the job keeps the deadline given to the current token');

-- Empty input.
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.renew_many(job_ids => '{}'::bigint[], tokens => '{}'::uuid[])$$,
                'renew_many of empty arrays returns no rows');
RESET ROLE;

-- Bad input.
SELECT to_jsonb(j) AS a_row FROM taskboard.jobs AS j WHERE id = :a_id \gset
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s, %s]::bigint[], tokens => ARRAY[%L]::uuid[])$$,
                        :a_id, :f_id, :'a_token'),
                 '22023', NULL, 'renew_many rejects more job_ids than tokens');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L, %L]::uuid[])$$,
                        :a_id, :'a_token', :'f_token'),
                 '22023', NULL, 'renew_many rejects more tokens than job_ids');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => NULL, tokens => ARRAY[%L]::uuid[])$$,
                        :'a_token'),
                 '22023', NULL, 'renew_many rejects NULL job_ids');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => NULL)$$,
                        :a_id),
                 '22023', NULL, 'renew_many rejects NULL tokens');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[], lease => '0 seconds')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew_many rejects a zero lease');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[], lease => '-1 minute')$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew_many rejects a negative lease');
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[], lease => NULL)$$,
                        :a_id, :'a_token'),
                 '22023', NULL, 'renew_many rejects a NULL lease');
RESET ROLE;
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok(format($$SELECT * FROM taskboard.renew_many(job_ids => ARRAY[%s]::bigint[], tokens => ARRAY[%L]::uuid[])$$,
                        :a_id, :'a_token'),
                 '42501', NULL, 'a producer may not renew leases');
RESET ROLE;
SELECT is((SELECT to_jsonb(j) FROM taskboard.jobs AS j WHERE id = :a_id), :'a_row'::jsonb,
          'rejected calls leave the holder''s lease unchanged');

SET LOCAL ROLE taskboard_admin;
SELECT is((SELECT count(lease_expires_at)
             FROM taskboard.renew_many(job_ids => ARRAY[:a_id]::bigint[], tokens => ARRAY[:'a_token']::uuid[])),
          1::bigint,
          'an administrator can renew with the current token');
RESET ROLE;

-- lease bounded by the deadline it gives ------------------------------------------

SET LOCAL ROLE taskboard_worker;
SELECT throws_like($$SELECT * FROM taskboard.renew_many(ARRAY[1]::bigint[], ARRAY[gen_random_uuid()], '12000 mon -360000 days 11 hours')$$,
    'lease must be at most 12 hours, got %', 'a worker cannot renew many with a lease of months less days');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
