-- notify_runnable(queue): internal. Sends NOTIFY taskboard, '<queue>' when
-- a job becomes runnable now, unless the setting taskboard.notify is off
-- (off, false, no, 0). Never granted to an application role.
--
-- A NOTIFY is delivered only at commit, and every pgTAP file rolls back, so
-- delivery is tested by pytest with a listening connection. What this file
-- can see: the function's shape and privileges, that enqueue and
-- enqueue_many work with notifications on and off, and whether
-- notify_runnable calls pg_notify at all under each setting. For the last,
-- it uses a probe: pg_notify rejects a payload of 8000 bytes or more with
-- 22023 ("payload string too long") at the call, not at commit, and the
-- payload is the queue name.

BEGIN;
SELECT plan(25);

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

-- Whether notify_runnable notifies: the payload-length probe ----------------
-- Called as the owner, since no application role may call it. Which callers
-- notify, and when, is tested by pytest with a listening connection.

SELECT pg_catalog.repeat('q', 8000) AS long_queue \gset
SET LOCAL ROLE taskboard_owner;

RESET taskboard.notify;
SELECT throws_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'), '22023', NULL,
    'with taskboard.notify unset, notify_runnable sends a notification');
SET LOCAL taskboard.notify = on;
SELECT throws_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'), '22023', NULL,
    'taskboard.notify = on keeps notifications on');
SET LOCAL taskboard.notify = 'true';
SELECT throws_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'), '22023', NULL,
    'taskboard.notify = true keeps notifications on');
SET LOCAL taskboard.notify = off;
SELECT lives_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'),
    'taskboard.notify = off turns notifications off');
SET LOCAL taskboard.notify = 'false';
SELECT lives_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'),
    'taskboard.notify = false turns notifications off');
SET LOCAL taskboard.notify = 'no';
SELECT lives_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'),
    'taskboard.notify = no turns notifications off');
SET LOCAL taskboard.notify = '0';
SELECT lives_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'),
    'taskboard.notify = 0 turns notifications off');
SET LOCAL taskboard.notify = 'OFF';
SELECT lives_ok(format($$SELECT taskboard.notify_runnable(%L)$$, :'long_queue'),
    'the setting is read case-insensitively: OFF turns notifications off');

RESET taskboard.notify;
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
