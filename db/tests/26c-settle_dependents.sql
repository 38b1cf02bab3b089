-- settle_dependents: what an end means for the jobs waiting on it. Every
-- dependent counts the edges it loses (a cancelled one too, so that a
-- retry waits for exactly the edges it has); a dependent that runs anyway
-- beside a cancelled dependency is due no sooner than that dependency's
-- held_until; a job not ended settles nothing.

BEGIN;
SELECT plan(6);

CREATE TEMP TABLE got (job_id bigint, token uuid);
GRANT ALL ON got TO taskboard_worker;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('p', '{}', 'sq') AS p \gset
SELECT taskboard.enqueue('q', '{}', 'sq') AS q \gset
SELECT taskboard.enqueue('k', '{}', 'sq-kids', depends_on => ARRAY[:p, :q]) AS kid \gset
SELECT taskboard.enqueue('r', '{}', 'sq-kids', depends_on => ARRAY[:p],
                         on_dependency_failure => 'run') AS anyway \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
INSERT INTO got SELECT job_id, token FROM taskboard.claim('sq', 'w', 10, '10 minutes');
RESET ROLE;

SELECT lives_ok(format($$SELECT taskboard.settle_dependents(ARRAY[%s::bigint])$$, :p),
    'a settle of a job that has not ended');
SELECT results_eq(format($$SELECT count(*) FROM taskboard.job_dependencies WHERE depends_on = %s$$, :p),
    $$VALUES (2::bigint)$$, 'removes none of its edges');

SET LOCAL ROLE taskboard_admin;
SELECT ok(taskboard.cancel(:kid), 'the first dependent is cancelled while it waits');
SELECT ok(taskboard.cancel(:p), 'then its dependency is cancelled under a live lease');
RESET ROLE;
SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :kid),
    $$VALUES ('cancelled', 1)$$, 'the cancelled dependent counts the edge it lost');
SELECT results_eq(
    format($$SELECT a.state, a.run_at >= p.held_until FROM taskboard.jobs AS a, taskboard.jobs AS p
              WHERE a.id = %s AND p.id = %s$$, :anyway, :p),
    $$VALUES ('queued', true)$$,
    'the dependent that runs anyway is due no sooner than the cancelled lease''s end');

SELECT * FROM finish();
ROLLBACK;
