-- prune is the admin's only. A worker login could claim any due queued job,
-- fail it without retry and prune it at once: the job another component
-- enqueued would be gone. As the worker, prune raises 42501 and the job
-- stays.

BEGIN;
SELECT plan(5);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue(task => 'invoice', queue => 'prune-roles') AS id \gset
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT token AS token FROM taskboard.claim(queue => 'prune-roles', worker => 'mallory') \gset
SELECT is(taskboard.fail(job_id => :id, token => :'token', error => 'x', retry => false), 'dead',
    'a worker fails the job it claimed, without retry: it is dead');
SELECT throws_ok($$SELECT taskboard.prune('0')$$, '42501', NULL,
    'a worker cannot prune: claim, fail and prune cannot erase a job');
RESET ROLE;
SELECT is((SELECT state FROM taskboard.get_job(:id)), 'dead', 'the job is still there, dead, for an admin to see and retry');

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.prune('0')$$, '42501', NULL, 'a producer cannot prune');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT cmp_ok(taskboard.prune('0'), '>=', 1::bigint, 'an admin prunes it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
