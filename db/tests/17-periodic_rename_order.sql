-- A renamed schedule (previous_names) enqueues no slot its old name already
-- took, whichever declaration reaches the slot first: during a rolling
-- deploy a worker still declaring the old name may take the next slot
-- before a worker declaring the new name does.

BEGIN;
SELECT plan(8);

SELECT pg_catalog.date_trunc('minute', pg_catalog.clock_timestamp()) - interval '10 minutes' AS slot1 \gset
SELECT :'slot1'::timestamptz + interval '5 minutes' AS slot2 \gset

SET LOCAL ROLE taskboard_worker;
SELECT isnt(taskboard.enqueue_periodic(schedule => 'digest', slot => :'slot1', task => 'send_digest', queue => 'mail'),
    NULL, 'the old name takes the first slot');
SELECT is(taskboard.enqueue_periodic(schedule => 'digest-daily', slot => :'slot1', task => 'send_digest', queue => 'mail',
                                     previous_names => '{digest}'),
    NULL, 'the new name, first seen, carries the old name''s slot over');
-- The next slot: the worker still declaring the old name is first.
SELECT isnt(taskboard.enqueue_periodic(schedule => 'digest', slot => :'slot2', task => 'send_digest', queue => 'mail'),
    NULL, 'the old name takes the next slot first');
SELECT is(taskboard.enqueue_periodic(schedule => 'digest-daily', slot => :'slot2', task => 'send_digest', queue => 'mail',
                                     previous_names => '{digest}'),
    NULL, 'the new name does not enqueue the slot its old name took meanwhile');
-- The old names' slots never hide a conflict under the new name itself.
SELECT isnt(taskboard.enqueue_periodic(schedule => 'weekly', slot => :'slot1', task => 'other', queue => 'mail'),
    NULL, 'another declaration takes a slot under the new name');
SELECT throws_ok(
    format($$SELECT taskboard.enqueue_periodic(schedule => 'weekly', slot => %L, task => 'send_digest', queue => 'mail',
                                               previous_names => '{digest}')$$, :'slot1'),
    '23505', NULL, 'that slot, also held by an old name, is still a conflict for another task');
-- A rename that changes the task too: its first slot, taken under the old
-- name for the old task, is no conflict, and is not enqueued again.
SELECT isnt(taskboard.enqueue_periodic(schedule => 'cleanup', slot => :'slot1', task => 'old_cleanup', queue => 'mail'),
    NULL, 'the old name takes a slot for the old task');
SELECT is(taskboard.enqueue_periodic(schedule => 'cleanup-v2', slot => :'slot1', task => 'new_cleanup', queue => 'mail',
                                     previous_names => '{cleanup}'),
    NULL, 'the new name with a new task carries that slot over, without a conflict');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
