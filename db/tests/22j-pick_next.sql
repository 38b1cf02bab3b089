-- pick_next(queue, clock, most): the picker of claim's common path, called
-- directly. Without taskboard.claim_cursor it is pick_queued behind the
-- check for expired leases. With it, the session keeps a cursor per queue:
-- the jobs after it are taken until a walk from the head is due, unless
-- fewer than `most` follow it; a malformed or foreign cursor, or one due
-- more than 2 s on, counts as none, a rolled-back call leaves the cursor as
-- it was, and the cursor's run_at is exact in any year. Internal: the
-- application roles cannot call it; claim does (20-claim tests it).

BEGIN;
SELECT plan(28);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.pick_next('n', now(), 1)$$, '42501', NULL,
    'an admin cannot call pick_next');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

CREATE TEMP TABLE ids AS
SELECT taskboard.enqueue(task => 'a', queue => 'n', run_at => now() - interval '1 minute') AS a,
       taskboard.enqueue(task => 'b', queue => 'n', run_at => now() - interval '1 minute') AS b,
       taskboard.enqueue(task => 'c', queue => 'n', run_at => now() - interval '1 minute') AS c,
       taskboard.enqueue(task => 'd', queue => 'n', run_at => now() - interval '1 minute') AS d,
       taskboard.enqueue(task => 'e', queue => 'n', run_at => now() - interval '1 minute') AS e;
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS at;
CREATE TEMP VIEW kept AS
SELECT current_setting('taskboard.cursor_' || to_hex(hashtext('n')), true) AS cursor;

-- Without the setting: the head, in claim order, and no cursor ----------------

SELECT is(taskboard.pick_next('n', (SELECT at FROM t0), 2), ARRAY[(SELECT a FROM ids), (SELECT b FROM ids)],
    'without taskboard.claim_cursor, pick_next takes the head of the queue in claim order');
SELECT is(taskboard.pick_next('n', (SELECT at FROM t0), 2), ARRAY[(SELECT a FROM ids), (SELECT b FROM ids)],
    'and again the head: nothing was granted, nothing is remembered');
SELECT ok(coalesce((SELECT cursor FROM kept), '') = '', 'without the setting no cursor is kept');
SELECT is(taskboard.pick_next('empty', (SELECT at FROM t0), 2), '{}'::bigint[],
    'a queue without jobs gives an empty array');

-- With it: a walk from the head keeps the last job's key ---------------------------

SELECT set_config('taskboard.claim_cursor', 'on', true);
SELECT is(taskboard.pick_next('empty', clock_timestamp(), 2), '{}'::bigint[],
    'with the setting, a queue without jobs gives an empty array');
SELECT is(current_setting('taskboard.cursor_' || to_hex(hashtext('empty')), true), NULL,
    'and is given no setting: a session keeps one only for the queues it took jobs of');
SELECT is(taskboard.pick_next('n', clock_timestamp(), 2), ARRAY[(SELECT a FROM ids), (SELECT b FROM ids)],
    'with the setting, the first call walks from the head');
SELECT matches((SELECT cursor FROM kept), '^[0-9]+ 0 [0-9]+ [0-9]+ ' || (SELECT b FROM ids) || ' n$',
    'and keeps a cursor at the last job it picked, with the queue named');
CREATE TEMP TABLE walked AS
SELECT ('epoch'::timestamptz + split_part(cursor, ' ', 1)::bigint * interval '1 microsecond') AS due FROM kept;
SELECT ok((SELECT due FROM walked) BETWEEN clock_timestamp() + interval '150 milliseconds'
                                       AND clock_timestamp() + interval '2 seconds',
    'a quick walk makes the next one due 200 ms after it ended, and never more than 2 s');

-- Until the walk is due, the jobs after the cursor ----------------------------------

INSERT INTO ids (a) SELECT taskboard.enqueue(task => 'urgent', queue => 'n', priority => 5,
                                             run_at => now() - interval '1 minute');
SELECT is(taskboard.pick_next('n', (SELECT due FROM walked) - interval '1 millisecond', 2),
          ARRAY[(SELECT c FROM ids WHERE c IS NOT NULL), (SELECT d FROM ids WHERE d IS NOT NULL)],
    'before the walk is due, the jobs after the cursor are taken, a job queued ahead of it passed over');
SELECT matches((SELECT cursor FROM kept), '^[0-9]+ 0 [0-9]+ [0-9]+ ' || (SELECT d FROM ids WHERE d IS NOT NULL) || ' n$',
    'and the cursor moves to the last of them');
SELECT is((SELECT 'epoch'::timestamptz + split_part(cursor, ' ', 1)::bigint * interval '1 microsecond' FROM kept),
          (SELECT due FROM walked), 'the walk stays due when it was');

-- Fewer after the cursor than asked: the walk from the head -------------------------

SELECT is(taskboard.pick_next('n', (SELECT due FROM walked) - interval '1 millisecond', 3),
          ARRAY[(SELECT max(a) FROM ids), (SELECT a FROM ids WHERE b IS NOT NULL), (SELECT b FROM ids WHERE b IS NOT NULL)],
    'when fewer jobs follow the cursor than asked, pick_next walks from the head: the urgent job first');
SELECT matches((SELECT cursor FROM kept), '^[0-9]+ 0 [0-9]+ [0-9]+ ' || (SELECT b FROM ids WHERE b IS NOT NULL) || ' n$',
    'and the cursor is where that walk ended');

-- A due walk, an expired lease ----------------------------------------------------

-- A cursor as a walk writes it: due, priority, run_at as days and µs since the
-- epoch (UTC), id, queue.
CREATE FUNCTION pg_temp.cursor_at(due timestamptz, priority integer, run_at timestamptz, id bigint, queue text)
RETURNS text LANGUAGE sql AS $$
    SELECT set_config('taskboard.cursor_' || to_hex(hashtext(queue)), concat_ws(' ',
        (extract(epoch FROM due) * 1000000)::bigint, priority,
        (extract(epoch FROM run_at) * 1000000)::bigint / 86400000000,
        (extract(epoch FROM run_at) * 1000000)::bigint % 86400000000, id, queue), true)
$$;

SELECT is(taskboard.pick_next('n', clock_timestamp() + interval '1 hour', 1), ARRAY[(SELECT max(a) FROM ids)],
    'once the walk is due, pick_next walks from the head');
UPDATE taskboard.jobs SET state = 'running', attempt = 1, fence = 1, lease_token = gen_random_uuid(), claimed_by = 'gone',
                          started_at = now(), lease_expires_at = now() - interval '1 second'
 WHERE id = (SELECT e FROM ids WHERE e IS NOT NULL);
SELECT is(taskboard.pick_next('n', clock_timestamp() + interval '1 hour', 1), NULL::bigint[],
    'a walk finds the expired lease: NULL, for claim to reclaim it');
SELECT pg_temp.cursor_at(clock_timestamp() + interval '1 second', 5, '9999-12-31 23:59:59.999999+00', 0, 'n');
SELECT is(taskboard.pick_next('n', clock_timestamp(), 1), ARRAY[(SELECT a FROM ids WHERE b IS NOT NULL)],
    'before the walk is due, a cursor session takes the jobs after its cursor without looking for expired leases');

-- A value no walk wrote, a rolled-back call ----------------------------------------

SELECT pg_temp.cursor_at(clock_timestamp() + interval '1 hour', 5, '9999-12-31 23:59:59.999999+00', 0, 'n');
SELECT is(taskboard.pick_next('n', clock_timestamp(), 1), NULL::bigint[],
    'a cursor due more than 2 s on counts as none: a walk, which finds the expired lease');
UPDATE taskboard.jobs SET lease_expires_at = now() + interval '1 hour' WHERE id = (SELECT e FROM ids WHERE e IS NOT NULL);
SELECT set_config('taskboard.cursor_' || to_hex(hashtext('n')), '99999999999999999 0 x 1 1 n', true);
SELECT is(taskboard.pick_next('n', clock_timestamp(), 1), ARRAY[(SELECT max(a) FROM ids)],
    'a malformed cursor counts as none: a walk from the head');
SELECT pg_temp.cursor_at(clock_timestamp() + interval '1 second', 0, now(), 0, 'other');
SELECT set_config('taskboard.cursor_' || to_hex(hashtext('n')), current_setting('taskboard.cursor_' || to_hex(hashtext('other'))), true);
SELECT is(taskboard.pick_next('n', clock_timestamp(), 1), ARRAY[(SELECT max(a) FROM ids)],
    'a cursor naming another queue counts as none');
SELECT set_config('taskboard.cursor_' || to_hex(hashtext('n')), '99999999999999999999999 0 0 0 0 n', true);
SELECT lives_ok($$SELECT taskboard.pick_next('n', clock_timestamp(), 1)$$, 'an out-of-range cursor raises nothing');

CREATE TEMP TABLE before AS SELECT cursor FROM kept;
SAVEPOINT s;
SELECT taskboard.pick_next('n', clock_timestamp() + interval '9 hours', 1);
ROLLBACK TO SAVEPOINT s;
SELECT is((SELECT cursor FROM kept), (SELECT cursor FROM before), 'a rolled-back call leaves the cursor as it was');

-- The cursor's run_at is the job's, to the microsecond, in any year ----------------

INSERT INTO ids (a, b, c)
SELECT taskboard.enqueue(task => 'old', queue => 'y', run_at => '1600-01-01 00:00:00.000003+00'),
       taskboard.enqueue(task => 'old', queue => 'y', run_at => '1600-01-01 00:00:00.000003+00'),
       taskboard.enqueue(task => 'old', queue => 'y', run_at => '0001-01-01 00:00:00.000001+00');
SELECT is(taskboard.pick_next('y', clock_timestamp(), 1), ARRAY[(SELECT max(c) FROM ids)],
    'a job of the year 1 comes first');
SELECT is(taskboard.pick_next('y', clock_timestamp(), 1), ARRAY[(SELECT max(a) FROM ids)],
    'after it, from the cursor, the first of two jobs of the same microsecond of 1600');
SELECT is(taskboard.pick_next('y', clock_timestamp(), 1), ARRAY[(SELECT max(b) FROM ids)],
    'and then the second: a cursor rebuilt a microsecond late would pass it over');

SELECT is((SELECT count(*)::integer FROM taskboard.jobs WHERE queue = 'n' AND state = 'queued'), 5,
    'pick_next writes no job');
SELECT is((SELECT count(*)::integer FROM taskboard.job_events), 0, 'nor any history');

SELECT * FROM finish();
ROLLBACK;
