-- recheck_dependencies: the checks a later claim works through. An edge
-- whose dependency ended unseen (its end ran before the enqueue committed)
-- is settled; a dependency still running leaves its edge to its own end
-- and the check goes; an end with dependents left is settled 1000 edges at
-- a time; nobody but the owner may call it.

BEGIN;
SELECT plan(10);

CREATE TEMP TABLE got (job_id bigint, token uuid);
GRANT ALL ON got TO taskboard_worker;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.recheck_dependencies()$$, '42501', NULL,
    'a worker cannot run the checks itself');
SELECT taskboard.enqueue('d', '{}', 'rq') AS ended \gset
SELECT taskboard.enqueue('d', '{}', 'rq') AS running \gset
INSERT INTO got SELECT job_id, token FROM taskboard.claim('rq', 'w', 10);
SELECT taskboard.complete(:ended, (SELECT token FROM got WHERE job_id = :ended));
RESET ROLE;

-- As an enqueue that read both running would have left them: a waiting job
-- with an edge to each, and its check.
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, max_attempts,
                            dependencies_left, on_dependency_failure)
VALUES ('rq-kids', 'k', '{}', 'waiting', clock_timestamp(), 5, 2, 'cancel')
RETURNING id AS kid \gset
INSERT INTO taskboard.job_dependencies (job_id, depends_on) VALUES (:kid, :ended), (:kid, :running);
INSERT INTO taskboard.dependency_checks (job_id, side) VALUES (:kid, 'dependent');

SELECT is(taskboard.recheck_dependencies(), 1, 'one check worked on');
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :kid),
    $$VALUES ('waiting', 1)$$, 'the edge to the job that ended is settled, the other one waits');
SELECT results_eq(format($$SELECT depends_on FROM taskboard.job_dependencies WHERE job_id = %s$$, :kid),
    format($$VALUES (%s::bigint)$$, :running), 'only the edge to the running job is left');
SELECT is_empty(format($$SELECT FROM taskboard.dependency_checks WHERE job_id = %s$$, :kid),
    'the check goes: the running job''s end sees the committed edge');

SET LOCAL ROLE taskboard_worker;
SELECT ok(taskboard.complete(:running, (SELECT token FROM got WHERE job_id = :running)),
    'the running job completes');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :kid),
    $$VALUES ('queued', 0)$$, 'and its end releases the job, in its own transaction');

-- An end with more dependents than one call settles.
SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('w', '{}', 'rq-wide') AS wide \gset
SELECT count(taskboard.enqueue('k', '{}', 'rq-wide-kids', depends_on => ARRAY[:wide]::bigint[]))
  FROM generate_series(1, 1001);
RESET ROLE;
DELETE FROM taskboard.dependency_checks WHERE side = 'dependent';
SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(:wide), 'a job with 1001 dependents is cancelled');
RESET ROLE;
SELECT results_eq($$SELECT state, count(*) FROM taskboard.jobs WHERE queue = 'rq-wide-kids' GROUP BY 1 ORDER BY 1$$,
    $$VALUES ('cancelled', 1000::bigint), ('waiting', 1::bigint)$$,
    'its cancel settles 1000 of them and leaves one');
SELECT taskboard.recheck_dependencies();
SELECT results_eq($$SELECT state, count(*) FROM taskboard.jobs WHERE queue = 'rq-wide-kids' GROUP BY 1$$,
    $$VALUES ('cancelled', 1001::bigint)$$,
    'the next check settles the last one, and its row goes');

SELECT * FROM finish();
ROLLBACK;
