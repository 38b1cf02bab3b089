-- revert_losses and release 0.6.1: a revert to 0.6.0 drops the worker
-- names that the reclaims of the jobs' history keep beside their role
-- (job_events.actor_worker); other lines of the history keep none.

BEGIN;
SELECT plan(3);

DELETE FROM taskboard.jobs;
DELETE FROM taskboard.queues;
DELETE FROM taskboard.schedule_slots;

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('p', '{}', 'rr') AS p \gset
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.claim('rr', 'worker-a');
RESET ROLE;
UPDATE taskboard.jobs SET lease_expires_at = now() - interval '1 second' WHERE id = :p;
SET LOCAL ROLE taskboard_worker;
SELECT taskboard.claim('rr', 'worker-b');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT results_eq(
    $$SELECT data, added_in, rows FROM taskboard.revert_losses('0.6.0')$$,
    $$VALUES ('reclaiming workers', '0.6.1', 1::bigint)$$,
    'a revert to 0.6.0 drops the worker name of one reclaim');
SELECT taskboard.cancel(:p);
SELECT results_eq(
    $$SELECT data, rows FROM taskboard.revert_losses('0.6.0')$$,
    $$VALUES ('reclaiming workers', 1::bigint)$$,
    'a cancel''s line keeps no worker name of its own to drop');
SELECT ok(
    (SELECT pg_catalog.bool_or(data = 'reclaiming workers') FROM taskboard.revert_losses('0.1.0')),
    'what the guard asks for names them too');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
