-- Jobs that wait for other jobs: enqueue's depends_on makes a job waiting
-- until its dependencies end; an accepted completion of the last releases
-- it in the same transaction, a refused one releases nothing; a dependency
-- that ends dead or cancelled cancels its dependents (and theirs), unless
-- they run anyway (on_dependency_failure 'run'); bad input raises 22023.

BEGIN;
SELECT plan(37);

CREATE TEMP TABLE got (job_id bigint, token uuid);
GRANT ALL ON got TO taskboard_worker;

-- Who may: any role that enqueues; the internals are nobody's.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('a', '{}', 'dq') AS a \gset
SELECT taskboard.enqueue('b', '{}', 'dq') AS b \gset
SELECT taskboard.enqueue('c', '{}', 'dq', depends_on => ARRAY[:a, :b, :a]) AS c \gset
SELECT throws_ok($$SELECT taskboard.settle_dependents(ARRAY[1::bigint])$$, '42501', NULL,
    'a producer cannot settle dependents itself');
RESET ROLE;

SELECT results_eq(format($$SELECT state, dependencies_left, on_dependency_failure FROM taskboard.jobs WHERE id = %s$$, :c),
    $$VALUES ('waiting', 2, 'cancel')$$, 'a job with two dependencies (one named twice) waits for two');
SELECT results_eq(format($$SELECT depends_on FROM taskboard.job_dependencies WHERE job_id = %s ORDER BY 1$$, :c),
    format($$VALUES (%s::bigint), (%s::bigint)$$, :a, :b), 'an edge to each');
SELECT results_eq(format($$SELECT side FROM taskboard.dependency_checks WHERE job_id = %s$$, :c),
    $$VALUES ('dependent'::text)$$, 'its edges are to be checked again once its transaction has committed');
SELECT results_eq($$SELECT state, count(*) FROM taskboard.find_jobs(queue => 'dq', state => 'waiting') GROUP BY 1$$,
    $$VALUES ('waiting', 1::bigint)$$, 'find_jobs finds it by the state waiting');

-- Claim never takes a waiting job.
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT job_id, token FROM taskboard.claim('dq', 'w1', 10);
RESET ROLE;
SELECT results_eq($$SELECT job_id FROM got ORDER BY 1$$, format($$VALUES (%s::bigint), (%s::bigint)$$, :a, :b),
    'a claim takes the two dependencies, not the waiting job');

-- A's holder stalls; its lease is reclaimed; its late completion is refused and releases nothing.
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :a;
SELECT token AS stale FROM got WHERE job_id = :a \gset
TRUNCATE got;
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT job_id, token FROM taskboard.claim('dq', 'w2', 10);
SELECT is(taskboard.complete(:a, :'stale'::uuid), false, 'the stale holder''s completion is refused');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :c),
    $$VALUES ('waiting', 2)$$, 'and the dependent still waits for both');
SELECT token AS fresh FROM got WHERE job_id = :a \gset
SELECT lease_token AS btoken FROM taskboard.jobs WHERE id = :b \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.complete(:a, :'fresh'::uuid), true, 'the new holder completes a');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :c),
    $$VALUES ('waiting', 1)$$, 'the dependent waits for one');
SET LOCAL ROLE taskboard_worker;
SELECT results_eq(format($$SELECT job_id, completed FROM taskboard.complete_many(ARRAY[%s::bigint], ARRAY[%L::uuid])$$, :b, :'btoken'),
    format($$VALUES (%s::bigint, true)$$, :b), 'complete_many completes b');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left, run_at >= (SELECT finished_at FROM taskboard.jobs WHERE id = %s)
                             FROM taskboard.jobs WHERE id = %s$$, :b, :c),
    $$VALUES ('queued', 0, true)$$, 'its last dependency done, the job is queued, runnable from then');
SELECT is_empty(format($$SELECT * FROM taskboard.job_dependencies WHERE job_id = %s$$, :c), 'its edges are gone');
SET LOCAL ROLE taskboard_worker;
SELECT results_eq($$SELECT job_id FROM taskboard.claim('dq', 'w3', 10)$$, format($$VALUES (%s::bigint)$$, :c),
    'and a claim takes it');
RESET ROLE;

-- Failure cascades; 'run' counts a failed dependency as ended.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('p', '{}', 'df') AS p \gset
SELECT taskboard.enqueue('q', '{}', 'df', depends_on => ARRAY[:p]) AS q \gset
SELECT taskboard.enqueue('r', '{}', 'df', depends_on => ARRAY[:q]) AS r \gset
SELECT taskboard.enqueue('s', '{}', 'df', depends_on => ARRAY[:q], on_dependency_failure => 'run') AS s \gset
SELECT taskboard.enqueue('t', '{}', 'df', depends_on => ARRAY[:p], on_dependency_failure => 'run') AS t \gset
RESET ROLE;
TRUNCATE got;
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT job_id, token FROM taskboard.claim('df', 'w1', 10);
RESET ROLE;
SELECT token AS ptoken FROM got WHERE job_id = :p \gset
SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.fail(:p, :'ptoken'::uuid, 'boom', retry => false), 'dead', 'p fails for good');
RESET ROLE;
SELECT results_eq(format($$SELECT id, state, errors -> -1 ->> 'error' FROM taskboard.jobs WHERE id IN (%s, %s, %s, %s) ORDER BY id$$,
                         :q, :r, :s, :t),
    format($$VALUES (%s::bigint, 'cancelled', 'dependency %s ended dead'),
                    (%s::bigint, 'cancelled', 'dependency %s ended cancelled'),
                    (%s::bigint, 'queued', NULL),
                    (%s::bigint, 'queued', NULL)$$, :q, :p, :r, :q, :s, :t),
    'its dependent is cancelled with the reason, and that one''s after it; those that run anyway are queued');

-- A cancel cancels the dependents; a waiting job cancelled waits no more.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('u', '{}', 'dc') AS u \gset
SELECT taskboard.enqueue('v', '{}', 'dc', depends_on => ARRAY[:u]) AS v \gset
SELECT taskboard.enqueue('x', '{}', 'dc') AS x \gset
SELECT taskboard.enqueue('y', '{}', 'dc', depends_on => ARRAY[:x]) AS y \gset
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.cancel(:u), true, 'an admin cancels a queued dependency');
SELECT is(taskboard.cancel(:y), true, 'and a waiting job');
RESET ROLE;
SELECT results_eq(format($$SELECT state, errors -> -1 ->> 'error' FROM taskboard.jobs WHERE id = %s$$, :v),
    format($$VALUES ('cancelled', 'dependency %s ended cancelled')$$, :u), 'the dependency''s cancel cancels its dependent');
SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.retry(:y), true, 'a cancelled waiting job is retried');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :y),
    $$VALUES ('waiting', 1)$$, 'and waits again for the dependency that has not ended');

-- A spent lease buried by claim cancels its dependents.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('z', '{}', 'db', max_attempts => 1) AS z \gset
SELECT taskboard.enqueue('zz', '{}', 'db', depends_on => ARRAY[:z]) AS zz \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT is((SELECT count(*) FROM taskboard.claim('db', 'w1', 1)), 1::bigint, 'the one-attempt job is claimed');
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = :z;
SET LOCAL ROLE taskboard_worker;
SELECT is_empty($$SELECT * FROM taskboard.claim('db', 'w2', 10)$$, 'the next claim buries it and takes nothing');
RESET ROLE;
SELECT results_eq(format($$SELECT state, errors -> -1 ->> 'error' FROM taskboard.jobs WHERE id = %s$$, :zz),
    format($$VALUES ('cancelled', 'dependency %s ended dead')$$, :z), 'its dependent is cancelled');

-- Dependencies already ended.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('k1', '{}', 'de', depends_on => ARRAY[:a]) AS k1 \gset
SELECT taskboard.enqueue('k2', '{}', 'de', depends_on => ARRAY[:a, :p]) AS k2 \gset
SELECT taskboard.enqueue('k3', '{}', 'de', depends_on => ARRAY[:p], on_dependency_failure => 'run') AS k3 \gset
RESET ROLE;
SELECT results_eq(format($$SELECT id, state, errors -> -1 ->> 'error' FROM taskboard.jobs WHERE id IN (%s, %s, %s) ORDER BY id$$, :k1, :k2, :k3),
    format($$VALUES (%s::bigint, 'queued', NULL), (%s::bigint, 'cancelled', 'dependency %s ended dead'), (%s::bigint, 'queued', NULL)$$,
           :k1, :k2, :p, :k3),
    'on dependencies that ended, a job is queued at once, or cancelled at once when one died (unless it runs anyway)');

-- Bad input: 22023, nothing written.
SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.enqueue('bad', '{}', 'dx', depends_on => ARRAY[9223372036854775807])$$, '22023',
    'depends_on names job 9223372036854775807, which does not exist', 'an unknown id is refused, named');
SELECT throws_ok(format($$SELECT taskboard.enqueue('bad', '{}', 'dx', depends_on => ARRAY[%s, NULL])$$, :a), '22023',
    'depends_on must not contain NULL', 'a NULL id is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue('bad', '{}', 'dx', depends_on => ARRAY[[%s]])$$, :a), '22023',
    'depends_on must be a one-dimensional array of job ids', 'a two-dimensional array is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue('bad', '{}', 'dx', dedupe_key => 'k', depends_on => ARRAY[%s])$$, :a), '22023',
    'a job with depends_on cannot have a dedupe_key', 'a dedupe_key with dependencies is refused');
SELECT throws_ok(format($$SELECT taskboard.enqueue('bad', '{}', 'dx', depends_on => ARRAY[%s], on_dependency_failure => 'ignore')$$, :a), '22023',
    'on_dependency_failure must be cancel or run, got ''ignore''', 'an unknown on_dependency_failure is refused');
SELECT throws_ok($$SELECT taskboard.enqueue('bad', '{}', 'dx', on_dependency_failure => NULL)$$, '22023',
    'on_dependency_failure must be cancel or run, got NULL', 'a NULL on_dependency_failure is refused');
SELECT throws_ok($$SELECT taskboard.enqueue('bad', '{}', 'dx', on_dependency_failure => 'run')$$, '22023',
    'on_dependency_failure ''run'' needs depends_on: a job without dependencies has none to fail (pass depends_on, or leave on_dependency_failure out)',
    'on_dependency_failure run without depends_on is refused, naming the argument and the fix');
RESET ROLE;
SELECT is_empty($$SELECT * FROM taskboard.jobs WHERE queue = 'dx'$$, 'refused calls write nothing');

-- An empty depends_on is no dependency.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('n', '{}', 'dn', depends_on => '{}') AS n \gset
SELECT taskboard.enqueue('n', '{}', 'dn', depends_on => '{}', dedupe_key => 'nightly') AS nk \gset
SELECT is(taskboard.enqueue('n', '{}', 'dn', depends_on => '{}', dedupe_key => 'nightly'), :nk::bigint,
    'an empty depends_on with a dedupe_key is accepted: the key finds the unfinished job');
SELECT taskboard.enqueue('n', '{}', 'dn', depends_on => '{}', on_dependency_failure => 'run') AS nr \gset
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :n),
    $$VALUES ('queued', NULL::integer)$$, 'an empty depends_on queues the job at once, as one without dependencies');
SELECT results_eq(format($$SELECT state, dedupe_key, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :nk),
    $$VALUES ('queued', 'nightly', NULL::integer)$$, 'the job with an empty depends_on keeps its dedupe_key');
SELECT is((SELECT state FROM taskboard.jobs WHERE id = :nr), 'queued',
    'an empty depends_on with on_dependency_failure run is accepted too: a list that came out empty');

SELECT * FROM finish();
ROLLBACK;
