-- notify_runnable(queue): internal. Sends NOTIFY taskboard, '<queue>' when
-- a job becomes runnable now, unless the setting taskboard.notify is off
-- (off, false, no, 0). Never granted to an application role.
--
-- A NOTIFY is delivered only at commit, and every pgTAP file rolls back, so
-- delivery is tested by pytest with a listening connection. What this file
-- can see: the function's shape and privileges, that enqueue and
-- enqueue_many work with notifications on and off, and whether they call
-- pg_notify at all. For the last, it uses a probe: pg_notify rejects a
-- payload of 8000 bytes or more with 22023 ("payload string too long") at
-- the call, not at commit. The payload is the queue name, so enqueueing
-- into a queue named with 8000 characters fails exactly when a
-- notification is attempted.

BEGIN;
SELECT plan(32);

-- Shape and privileges -------------------------------------------------------

SELECT function_returns('taskboard', 'notify_runnable', ARRAY['text'], 'void',
    'notify_runnable(queue text) exists and returns void');

SELECT is_definer('taskboard', 'notify_runnable', ARRAY['text'],
    'notify_runnable is SECURITY DEFINER');

SELECT is(
    (SELECT p.proconfig FROM pg_catalog.pg_proc AS p
      WHERE p.oid = 'taskboard.notify_runnable(text)'::regprocedure),
    ARRAY['search_path=pg_catalog, pg_temp'],
    'notify_runnable runs with search_path = pg_catalog, pg_temp'
);

SELECT function_privs_are('taskboard', 'notify_runnable', ARRAY['text'], r, ARRAY[]::name[],
                          r || ' cannot execute notify_runnable')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT taskboard.notify_runnable(queue => 'notify')$$, '42501', NULL,
    'a producer calling notify_runnable is refused');
RESET ROLE;
SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT taskboard.notify_runnable(queue => 'notify')$$, '42501', NULL,
    'a worker calling notify_runnable is refused');
RESET ROLE;
SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.notify_runnable(queue => 'notify')$$, '42501', NULL,
    'an admin calling notify_runnable is refused');
RESET ROLE;

-- enqueue works with notifications on and off --------------------------------

SELECT pg_catalog.count(*) AS rows_before FROM taskboard.jobs \gset

SET LOCAL ROLE taskboard_producer;
SET LOCAL taskboard.notify = off;
SELECT isnt(taskboard.enqueue(task => 'quiet', queue => 'notify'), NULL,
    'enqueue works with taskboard.notify = off');
SET LOCAL taskboard.notify = on;
SELECT isnt(taskboard.enqueue(task => 'loud', queue => 'notify'), NULL,
    'enqueue works with taskboard.notify = on');
SET LOCAL taskboard.notify = off;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.enqueue_many(task => 'quiet', payloads => ARRAY['{}', '{}']::jsonb[], queue => 'notify')),
    2::bigint, 'enqueue_many works with taskboard.notify = off');
SET LOCAL taskboard.notify = on;
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.enqueue_many(task => 'loud', payloads => ARRAY['{}', '{}']::jsonb[], queue => 'notify')),
    2::bigint, 'enqueue_many works with taskboard.notify = on');
RESET taskboard.notify;
RESET ROLE;

SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs), :rows_before::bigint + 6,
    'every enqueue inserted its jobs whatever the setting');

SELECT lives_ok($$SELECT pg_catalog.pg_notification_queue_usage()$$,
    'pg_notification_queue_usage() answers');
SELECT ok(pg_catalog.pg_notification_queue_usage() BETWEEN 0 AND 1,
    'the notification queue usage is a fraction between 0 and 1');

-- Whether enqueue notifies: the payload-length probe -------------------------

SELECT pg_catalog.repeat('q', 8000) AS long_queue \gset
SELECT clock_timestamp() + interval '1 hour' AS later \gset

SET LOCAL ROLE taskboard_producer;

SELECT throws_ok(
    format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    '22023', NULL,
    'with taskboard.notify unset, enqueue of a runnable job calls pg_notify with the queue name'
);

SET LOCAL taskboard.notify = on;
SELECT throws_ok(
    format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    '22023', NULL,
    'with taskboard.notify = on, enqueue of a runnable job calls pg_notify with the queue name'
);
SELECT lives_ok(
    format($$SELECT taskboard.enqueue(task => 't', queue => %L, run_at => %L)$$, :'long_queue', :'later'),
    'enqueue of a job scheduled for later sends no notification'
);
SELECT throws_ok(
    format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', '{}']::jsonb[], queue => %L)$$, :'long_queue'),
    '22023', NULL,
    'with taskboard.notify = on, enqueue_many of runnable jobs calls pg_notify with the queue name'
);
SELECT lives_ok(
    format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], queue => %L, run_at => %L)$$,
           :'long_queue', :'later'),
    'enqueue_many of jobs scheduled for later sends no notification'
);
SELECT lives_ok(
    format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => '{}', queue => %L)$$, :'long_queue'),
    'enqueue_many of an empty array sends no notification'
);

SET LOCAL taskboard.notify = off;
SELECT lives_ok(
    format($$SELECT taskboard.enqueue(task => 't', queue => %L, dedupe_key => 'k')$$, :'long_queue'),
    'with taskboard.notify = off, enqueue of a runnable job does not call pg_notify'
);
SELECT lives_ok(
    format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}']::jsonb[], queue => %L,
                                                 dedupe_keys => ARRAY['m'])$$, :'long_queue'),
    'with taskboard.notify = off, enqueue_many of runnable jobs does not call pg_notify'
);

SET LOCAL taskboard.notify = on;
SELECT lives_ok(
    format($$SELECT taskboard.enqueue(task => 't', queue => %L, dedupe_key => 'k')$$, :'long_queue'),
    'an enqueue answered by an unfinished job''s key inserts nothing and sends no notification'
);
SELECT lives_ok(
    format($$SELECT * FROM taskboard.enqueue_many(task => 't', payloads => ARRAY['{}', '{}']::jsonb[], queue => %L,
                                                 dedupe_keys => ARRAY['k', 'm'])$$, :'long_queue'),
    'an enqueue_many answered entirely by unfinished jobs'' keys sends no notification'
);

SET LOCAL taskboard.notify = 'false';
SELECT lives_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    'taskboard.notify = false turns notifications off');
SET LOCAL taskboard.notify = 'no';
SELECT lives_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    'taskboard.notify = no turns notifications off');
SET LOCAL taskboard.notify = '0';
SELECT lives_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    'taskboard.notify = 0 turns notifications off');
SET LOCAL taskboard.notify = 'OFF';
SELECT lives_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    'the setting is read case-insensitively: OFF turns notifications off');
SET LOCAL taskboard.notify = 'true';
SELECT throws_ok(format($$SELECT taskboard.enqueue(task => 't', queue => %L)$$, :'long_queue'),
    '22023', NULL,
    'taskboard.notify = true keeps notifications on');

RESET taskboard.notify;
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
