-- enqueue_waiting: enqueue's insert of a job with depends_on. It writes no
-- row of its dependencies (their holders' writes never wait for it), an
-- edge to each unfinished one and a check for later claims; an ended
-- dependency is not waited for; it names at most 10000 jobs.

BEGIN;
SELECT plan(7);

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.enqueue_waiting('t', '{}', 'q', now(), 0, 5, NULL, NULL, NULL, ARRAY[1::bigint], 'cancel')$$,
    '42501', NULL, 'a producer cannot call it but through enqueue');
SELECT taskboard.enqueue('d', '{}', 'ewq') AS d \gset
SELECT taskboard.enqueue('e', '{}', 'ewq') AS e \gset
RESET ROLE;
SELECT ctid::text AS d_version FROM taskboard.jobs WHERE id = :d \gset
UPDATE taskboard.jobs SET state = 'succeeded', finished_at = clock_timestamp() WHERE id = :e;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('k', '{}', 'ewq-kids', depends_on => ARRAY[:d, :e]) AS kid \gset
SELECT throws_ok(format($$SELECT taskboard.enqueue('k', '{}', 'ewq-kids', depends_on => ARRAY(SELECT %s::bigint FROM generate_series(1, 10001)))$$, :d),
    '22023', NULL, 'more than 10000 ids are refused');
RESET ROLE;

SELECT results_eq(format($$SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s$$, :kid),
    $$VALUES ('waiting', 1)$$, 'it waits for the unfinished dependency only');
SELECT results_eq(format($$SELECT depends_on FROM taskboard.job_dependencies WHERE job_id = %s$$, :kid),
    format($$VALUES (%s::bigint)$$, :d), 'one edge, to the unfinished dependency');
SELECT results_eq(format($$SELECT side FROM taskboard.dependency_checks WHERE job_id = %s$$, :kid),
    $$VALUES ('dependent'::text)$$, 'and a check for later claims');
SELECT is((SELECT ctid::text FROM taskboard.jobs WHERE id = :d), :'d_version',
    'the dependency''s row is not written (the same row version)');
SELECT is((SELECT has_dependents FROM taskboard.jobs WHERE id = :d), false,
    'has_dependents is no longer written');

SELECT * FROM finish();
ROLLBACK;
