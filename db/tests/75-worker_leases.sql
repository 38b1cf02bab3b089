-- Who holds what: worker_leases lists each running job's holder, since when
-- and until when, and each job cancelled under a lease not yet ended (its
-- holder may still be at work), read from the jobs table, for the admin
-- only. A lease is
-- made to expire by moving its deadline into the past as the owner.

BEGIN;
SELECT plan(15);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('mail', '{}', 'wq') AS a \gset
SELECT taskboard.enqueue('mail', '{}', 'wq') AS b \gset
SELECT taskboard.enqueue('mail', '{}', 'wq') AS c \gset
SELECT taskboard.enqueue('mail', '{}', 'wq') AS d \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT job_id AS held_a FROM taskboard.claim('wq', 'worker-a', 1, '60 seconds') \gset
SELECT job_id AS held_b1 FROM taskboard.claim('wq', 'worker-b', 1, '10 minutes') \gset
SELECT job_id AS held_b2 FROM taskboard.claim('wq', 'worker-b', 1, '30 seconds') \gset
RESET ROLE;
-- worker-a stalls: its lease runs out.
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '5 seconds' WHERE id = :held_a;

SET LOCAL ROLE taskboard_admin;
SELECT results_eq(
    $$SELECT worker, job_id FROM taskboard.worker_leases()$$,
    $$VALUES ('worker-a'::text, $$ || :held_a || $$::bigint),
             ('worker-b', $$ || :held_b2 || $$),
             ('worker-b', $$ || :held_b1 || $$)$$,
    'one row per running job, by worker, the lease that ends first first; a queued job is not listed');
SELECT ok((SELECT expires_in < interval '0' FROM taskboard.worker_leases() WHERE job_id = :held_a),
    'an expired lease shows a negative expires_in');
SELECT ok((SELECT expires_in BETWEEN interval '0' AND interval '30 seconds'
             FROM taskboard.worker_leases() WHERE job_id = :held_b2),
    'a live lease shows the time left, on the database''s clock');
SELECT is((SELECT started_at FROM taskboard.worker_leases() WHERE job_id = :held_b1),
          (SELECT started_at FROM taskboard.get_job(:held_b1)),
    'started_at is the holder''s claim');
SELECT is((SELECT fence FROM taskboard.worker_leases() WHERE job_id = :held_b1), 1::bigint,
    'the holder''s fence is shown');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.worker_leases(max_rows => 2)), 2::bigint,
    'max_rows bounds the rows');
SELECT throws_ok($$SELECT * FROM taskboard.worker_leases(max_rows => 0)$$, '22023', NULL,
    'max_rows below 1 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.worker_leases(max_rows => 1001)$$, '22023', NULL,
    'max_rows above 1000 is refused');
SELECT throws_ok($$SELECT * FROM taskboard.worker_leases(max_rows => NULL)$$, '22023', NULL,
    'a NULL max_rows is refused');
SELECT is(taskboard.cancel(:held_b1), true, 'the admin cancels one of worker-b''s jobs');
RESET ROLE;
SELECT held_until AS b1_held_until FROM taskboard.jobs WHERE id = :held_b1 \gset
SET LOCAL ROLE taskboard_admin;
SELECT results_eq(
    format($$SELECT worker, state, lease_expires_at FROM taskboard.worker_leases() WHERE job_id = %s$$, :held_b1),
    format($$VALUES ('worker-b'::text, 'cancelled'::text, %L::timestamptz)$$, :'b1_held_until'),
    'a job cancelled under a live lease is still listed, marked cancelled, until its held_until');
SELECT is((SELECT state FROM taskboard.worker_leases() WHERE job_id = :held_b2), 'running',
    'a running job is marked running');
SELECT is(taskboard.cancel(:held_a), true, 'the admin cancels worker-a''s job, whose lease expired');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.worker_leases() WHERE job_id = :held_a), 0::bigint,
    'a job cancelled after its lease expired is no longer listed: nobody holds it');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.worker_leases()$$, '42501', NULL,
    'a worker cannot list who holds what');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
