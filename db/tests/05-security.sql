-- Security: least privilege as DESIGN.md states it.
--
-- taskboard_owner (NOLOGIN, not a superuser) owns the schema, the table,
-- its sequence, the view, the types and every function. Every function is
-- SECURITY DEFINER with search_path = pg_catalog, pg_temp, but for the
-- argument checks (check_*), plain functions that only the owner's
-- functions call, with their caller's search_path, and last_failure_at,
-- the plain function of an index. EXECUTE is
-- granted per role exactly as the table `api` below lists it, and to nobody
-- else; no application role touches taskboard.jobs directly, and all three
-- read queue_stats and schedules.

BEGIN;
SELECT plan(607);

-- Who may execute what: one row per function of the schema.
CREATE TEMP TABLE api (
    fn       name PRIMARY KEY,
    args     name[] NOT NULL,
    producer boolean NOT NULL,
    worker   boolean NOT NULL,
    admin    boolean NOT NULL
) ON COMMIT DROP;

INSERT INTO api (fn, args, producer, worker, admin) VALUES
    ('enqueue',         ARRAY['text', 'jsonb', 'text', 'timestamp with time zone', 'integer', 'integer', 'text', 'jsonb', 'text', 'bigint[]', 'text'],
                                                                        true,  true,  true),
    ('enqueue_many',    ARRAY['text', 'jsonb[]', 'text', 'timestamp with time zone', 'integer', 'integer', 'text[]', 'jsonb', 'text[]'],
                                                                        true,  true,  true),
    ('enqueue_periodic', ARRAY['text', 'timestamp with time zone', 'text', 'jsonb', 'text', 'integer', 'integer', 'text[]'],
                                                                        false, true,  true),
    ('get_job',         ARRAY['bigint'],                                true,  true,  true),
    ('version',         ARRAY[]::name[],                                true,  true,  true),
    ('claim',           ARRAY['text', 'text', 'integer', 'interval'],   false, true,  true),
    ('renew',           ARRAY['bigint', 'uuid', 'interval'],            false, true,  true),
    ('renew_many',      ARRAY['bigint[]', 'uuid[]', 'interval'],        false, true,  true),
    ('complete',        ARRAY['bigint', 'uuid', 'jsonb'],               false, true,  true),
    ('complete_many',   ARRAY['bigint[]', 'uuid[]', 'jsonb[]'],         false, true,  true),
    ('fail',            ARRAY['bigint', 'uuid', 'text', 'interval', 'boolean', 'text'],
                                                                        false, true,  true),
    ('release',         ARRAY['bigint', 'uuid', 'interval'],            false, true,  true),
    ('lease_state',     ARRAY['bigint', 'uuid'],                        false, true,  true),
    ('cancel',          ARRAY['bigint'],                                false, false, true),
    ('retry',           ARRAY['bigint'],                                false, false, true),
    ('prune',           ARRAY['interval', 'integer'],                   false, false, true),
    ('remove_schedule', ARRAY['text'],                                  false, false, true),
    ('pause',           ARRAY['text'],                                  false, false, true),
    ('resume',          ARRAY['text'],                                  false, false, true),
    ('set_queue_limit', ARRAY['text', 'integer'],                       false, false, true),
    ('set_key_limit',   ARRAY['text', 'integer'],                       false, false, true),
    ('set_rate_limit',  ARRAY['text', 'integer', 'interval', 'boolean'],    false, false, true),
    ('set_queue_discard', ARRAY['text', 'boolean'],                     false, false, true),
    ('find_jobs',       ARRAY['text', 'text', 'text', 'bigint', 'integer'],
                                                                        true,  true,  true),
    ('queue_overview',  ARRAY['interval'],                              true,  true,  true),
    ('job_activity',    ARRAY['interval'],                              true,  true,  true),
    ('job_history',     ARRAY['bigint'],                                false, false, true),
    ('worker_leases',   ARRAY['integer'],                               false, false, true),
    ('notify_runnable', ARRAY['text'],                                  false, false, false),
    ('check_name',      ARRAY['text', 'text'],                          false, false, false),
    ('settle_dependents', ARRAY['bigint[]'],                            false, false, false),
    ('recheck_dependencies', ARRAY['integer'],                          false, false, false),
    ('enqueue_waiting', ARRAY['text', 'jsonb', 'text', 'timestamp with time zone', 'integer', 'integer', 'text', 'jsonb', 'text', 'bigint[]', 'text'],
                                                                        false, false, false),
    ('check_interval',  ARRAY['text', 'interval', 'interval'],          false, false, false),
    ('check_time',      ARRAY['text', 'timestamp with time zone'],      false, false, false),
    ('find_jobs_summary', ARRAY['text', 'text', 'text', 'bigint', 'integer'],
                                                                        true,  true,  true),
    ('last_failure_at', ARRAY['jsonb'],                                 false, false, false),
    ('record_refusals', ARRAY['text', 'bigint[]', 'uuid[]'],            false, false, false),
    ('check_arg'       , ARRAY['boolean', 'text'],
                                                                        false, false, false),
    ('check_given'     , ARRAY['text', 'anyelement', 'text'],
                                                                        false, false, false),
    ('check_key'       , ARRAY['text', 'text', 'integer', 'text'],
                                                                        false, false, false),
    ('check_items'     , ARRAY['text', 'anyarray'],
                                                                        false, false, false),
    ('check_flat'      , ARRAY['text', 'integer[]'],
                                                                        false, false, false),
    ('check_lengths'   , ARRAY['text', 'integer', 'text', 'integer'],
                                                                        false, false, false),
    ('check_between'   , ARRAY['text', 'bigint', 'bigint', 'bigint'],
                                                                        false, false, false),
    ('check_limit'     , ARRAY['text', 'integer', 'integer', 'text'],
                                                                        false, false, false),
    ('check_choice'    , ARRAY['text', 'text', 'text[]'],
                                                                        false, false, false),
    ('check_trace_context', ARRAY['jsonb'],
                                                                        false, false, false),
    ('check_delay'     , ARRAY['text', 'interval', 'text', 'boolean'],
                                                                        false, false, false),
    ('check_recent'    , ARRAY['interval'],
                                                                        false, false, false),
    ('set_limit'       , ARRAY['text', 'text', 'integer'],
                                                                        false, false, false),
    ('grant_leases'    , ARRAY['bigint[]', 'integer', 'text', 'interval', 'timestamp with time zone'],
                                                                        false, false, false),
    ('pick_queued'     , ARRAY['text', 'timestamp with time zone', 'integer'],
                                                                        false, false, false),
    ('pick_next'       , ARRAY['text', 'timestamp with time zone', 'integer'],
                                                                        false, false, false),
    ('complete_held'   , ARRAY['bigint[]', 'uuid[]', 'jsonb[]', 'timestamp with time zone'],
                                                                        false, false, false),
    ('pick_expired'    , ARRAY['text', 'timestamp with time zone', 'integer', 'text[]', 'integer', 'interval', 'boolean'],
                                                                        false, false, false),
    ('pick_keyed'      , ARRAY['text', 'timestamp with time zone', 'integer', 'text[]', 'integer', 'integer', 'interval', 'boolean', 'bigint[]'],
                                                                        false, false, false),
    ('bury_spent'      , ARRAY['text', 'timestamp with time zone'],
                                                                        false, false, false),
    ('queue_room'      , ARRAY['text', 'integer', 'timestamp with time zone'],
                                                                        false, false, false),
    ('window_room'     , ARRAY['text', 'integer', 'interval', 'timestamp with time zone'],
                                                                        false, false, false),
    ('full_keys'       , ARRAY['text', 'integer', 'timestamp with time zone'],
                                                                        false, false, false),
    ('rate_full_keys'  , ARRAY['text', 'timestamp with time zone', 'integer', 'text[]', 'text[]', 'integer', 'interval'],
                                                                        false, false, false),
    ('find_ids'        , ARRAY['text', 'text', 'text', 'bigint', 'integer'],
                                                                        false, false, false),
    ('check_leases'    , ARRAY['text', 'bigint[]', 'uuid[]', 'integer'],
                                                                        false, false, false),
    ('check_lease'     , ARRAY['bigint', 'uuid'],
                                                                        false, false, false),
    ('discard_held'    , ARRAY['bigint[]', 'uuid[]'],
                                                                        false, false, false),
    ('revert_losses',   ARRAY['text'],                                  false, false, true);

SELECT set_eq(
    $$SELECT p.proname FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace$$,
    $$SELECT fn FROM api$$,
    'the privilege table below covers every function of the schema'
);

-- Roles ---------------------------------------------------------------------

SELECT has_role(r, r || ' exists')
  FROM unnest(ARRAY['taskboard_owner', 'taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT isnt_superuser(r, r || ' is not a superuser')
  FROM unnest(ARRAY['taskboard_owner', 'taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT is(
    (SELECT rl.rolcanlogin FROM pg_catalog.pg_roles AS rl WHERE rl.rolname = r),
    false,
    r || ' is NOLOGIN'
)
  FROM unnest(ARRAY['taskboard_owner', 'taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT ok(
    NOT pg_catalog.pg_has_role(r, 'taskboard_owner', 'MEMBER'),
    r || ' is not a member of taskboard_owner, so it cannot act as the owner'
)
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

-- Ownership -----------------------------------------------------------------

SELECT schema_owner_is('taskboard', 'taskboard_owner', 'taskboard_owner owns the schema');
SELECT table_owner_is('taskboard', 'jobs', 'taskboard_owner', 'taskboard_owner owns taskboard.jobs');
SELECT table_owner_is('taskboard', 'queues', 'taskboard_owner', 'taskboard_owner owns taskboard.queues');
SELECT table_owner_is('taskboard', 'schedule_slots', 'taskboard_owner', 'taskboard_owner owns taskboard.schedule_slots');
SELECT sequence_owner_is('taskboard', 'jobs_id_seq', 'taskboard_owner', 'taskboard_owner owns the job id sequence');
SELECT view_owner_is('taskboard', 'queue_stats', 'taskboard_owner', 'taskboard_owner owns taskboard.queue_stats');
SELECT view_owner_is('taskboard', 'schedules', 'taskboard_owner', 'taskboard_owner owns taskboard.schedules');
SELECT type_owner_is('taskboard', 'claimed', 'taskboard_owner', 'taskboard_owner owns the type taskboard.claimed');
SELECT type_owner_is('taskboard', 'job_info', 'taskboard_owner', 'taskboard_owner owns the type taskboard.job_info');
SELECT type_owner_is('taskboard', 'job_summary', 'taskboard_owner', 'taskboard_owner owns the type taskboard.job_summary');

SELECT function_owner_is('taskboard', a.fn, a.args, 'taskboard_owner',
                         'taskboard_owner owns ' || a.fn || '()')
  FROM api AS a
 ORDER BY a.fn;

-- Security definer done right -----------------------------------------------

SELECT CASE
           WHEN a.fn LIKE 'check\_%' OR a.fn IN ('last_failure_at', 'record_refusals', 'set_limit', 'grant_leases',
                                              'pick_queued', 'pick_expired', 'pick_keyed', 'bury_spent',
                                              'queue_room', 'window_room', 'full_keys', 'rate_full_keys', 'find_ids',
                                              'complete_held', 'discard_held', 'pick_next') THEN
               isnt_definer('taskboard', a.fn, a.args, a.fn || '() is not SECURITY DEFINER: it runs as its caller, the owner')
           ELSE is_definer('taskboard', a.fn, a.args, a.fn || '() is SECURITY DEFINER')
       END
  FROM api AS a
 ORDER BY a.fn;

SELECT is(
    p.proconfig,
    CASE a.fn
        -- claim, complete_many and renew_many keep one index-walking plan per session, find_jobs is
        -- planned on every call (see their headers).
        WHEN 'claim' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_generic_plan', 'enable_seqscan=off']
        WHEN 'complete_many' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_generic_plan', 'enable_seqscan=off']
        WHEN 'renew_many' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_generic_plan', 'enable_seqscan=off']
        -- complete_held also writes its rows in job_id order (see its header).
        WHEN 'complete_held' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_generic_plan', 'enable_seqscan=off', 'enable_hashjoin=off', 'enable_bitmapscan=off']
        WHEN 'find_jobs' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_custom_plan']
        WHEN 'find_jobs_summary' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_custom_plan']
        WHEN 'find_ids' THEN ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_custom_plan']
        -- complete, fail and cancel probe the edges by index.
        WHEN 'complete' THEN ARRAY['search_path=pg_catalog, pg_temp', 'enable_seqscan=off']
        WHEN 'fail' THEN ARRAY['search_path=pg_catalog, pg_temp', 'enable_seqscan=off']
        WHEN 'cancel' THEN ARRAY['search_path=pg_catalog, pg_temp', 'enable_seqscan=off']
        -- settle_dependents joins by hash (see its header).
        WHEN 'settle_dependents' THEN ARRAY['search_path=pg_catalog, pg_temp', 'enable_nestloop=off', 'enable_seqscan=off']
        -- The checks run with their caller's settings.
        WHEN 'check_name' THEN NULL
        WHEN 'check_interval' THEN NULL
        WHEN 'check_time' THEN NULL
        WHEN 'check_lease' THEN NULL
        WHEN 'check_leases' THEN NULL
        WHEN 'check_recent' THEN NULL
        WHEN 'check_delay' THEN NULL
        WHEN 'check_trace_context' THEN NULL
        WHEN 'check_choice' THEN NULL
        WHEN 'check_limit' THEN NULL
        WHEN 'check_between' THEN NULL
        WHEN 'check_lengths' THEN NULL
        WHEN 'check_flat' THEN NULL
        WHEN 'check_items' THEN NULL
        WHEN 'check_key' THEN NULL
        WHEN 'check_given' THEN NULL
        WHEN 'check_arg' THEN NULL
        ELSE ARRAY['search_path=pg_catalog, pg_temp']
    END,
    CASE a.fn
        WHEN 'check_name' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_interval' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_time' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_lease' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_leases' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_recent' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_delay' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_trace_context' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_choice' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_limit' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_between' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_lengths' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_flat' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_items' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_key' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_given' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        WHEN 'check_arg' THEN a.fn || '() sets nothing: it runs with its caller''s search_path'
        ELSE a.fn || '() runs with search_path = pg_catalog, pg_temp and no other setting'
            || CASE a.fn
                   WHEN 'claim' THEN ' but plan_cache_mode = force_generic_plan and enable_seqscan = off'
                   WHEN 'complete_many' THEN ' but plan_cache_mode = force_generic_plan and enable_seqscan = off'
                   WHEN 'renew_many' THEN ' but plan_cache_mode = force_generic_plan and enable_seqscan = off'
                   WHEN 'complete_held' THEN ' but plan_cache_mode = force_generic_plan, enable_seqscan = off, enable_hashjoin = off and enable_bitmapscan = off'
                   WHEN 'find_jobs' THEN ' but plan_cache_mode = force_custom_plan'
                   WHEN 'settle_dependents' THEN ' but enable_nestloop = off and enable_seqscan = off'
                   WHEN 'complete' THEN ' but enable_seqscan = off'
                   WHEN 'fail' THEN ' but enable_seqscan = off'
                   WHEN 'cancel' THEN ' but enable_seqscan = off'
                   WHEN 'find_jobs_summary' THEN ' but plan_cache_mode = force_custom_plan'
                   WHEN 'find_ids' THEN ' but plan_cache_mode = force_custom_plan'
                   ELSE ''
               END
    END
)
  FROM api AS a
  LEFT JOIN pg_catalog.pg_proc AS p
    ON p.pronamespace = 'taskboard'::regnamespace
   AND p.proname = a.fn
 ORDER BY a.fn;

-- EXECUTE privileges: each function x the four roles and PUBLIC -------------

SELECT function_privs_are(
    'taskboard', a.fn, a.args, r.role,
    CASE WHEN r.granted THEN ARRAY['EXECUTE'] ELSE ARRAY[]::name[] END,
    r.role || CASE WHEN r.granted THEN ' can' ELSE ' cannot' END || ' execute ' || a.fn || '()'
)
  FROM api AS a
 CROSS JOIN LATERAL (VALUES
    (1, 'taskboard_owner'::name, true),
    (2, 'taskboard_producer',    a.producer),
    (3, 'taskboard_worker',      a.worker),
    (4, 'taskboard_admin',       a.admin),
    (5, 'public',                false)
 ) AS r(ord, role, granted)
 ORDER BY a.fn, r.ord;

-- Tables, sequence, view, schema --------------------------------------------

SELECT table_privs_are('taskboard', 'jobs', r, ARRAY[]::name[],
                       r || ' has no privilege on taskboard.jobs')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SELECT table_privs_are('taskboard', 'queues', r, ARRAY[]::name[],
                       r || ' has no privilege on taskboard.queues: pause, resume and set_queue_limit are the way in')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SELECT table_privs_are('taskboard', 'schedule_slots', r, ARRAY[]::name[],
                       r || ' has no privilege on taskboard.schedule_slots: enqueue_periodic is the way in')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SELECT sequence_privs_are('taskboard', 'jobs_id_seq', r, ARRAY[]::name[],
                          r || ' has no privilege on the job id sequence')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin', 'public']::name[]) AS r;

SELECT table_privs_are('taskboard', 'queue_stats', r, ARRAY['SELECT'],
                       r || ' may only read taskboard.queue_stats')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT table_privs_are('taskboard', 'queue_stats', 'public', ARRAY[]::name[],
                       'PUBLIC has no privilege on taskboard.queue_stats');

SELECT table_privs_are('taskboard', 'schedules', r, ARRAY['SELECT'],
                       r || ' may only read taskboard.schedules')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT table_privs_are('taskboard', 'schedules', 'public', ARRAY[]::name[],
                       'PUBLIC has no privilege on taskboard.schedules');

SELECT schema_privs_are('taskboard', r, ARRAY['USAGE'],
                        r || ' may use the schema but not create objects in it')
  FROM unnest(ARRAY['taskboard_producer', 'taskboard_worker', 'taskboard_admin']::name[]) AS r;

SELECT schema_privs_are('taskboard', 'public', ARRAY[]::name[],
                        'PUBLIC has no privilege on the schema');

-- Enforcement: the same, as each application role ---------------------------

SET LOCAL ROLE taskboard_producer;
SELECT throws_ok($$SELECT * FROM taskboard.jobs$$, '42501', NULL,
    'a producer cannot read taskboard.jobs directly');
SELECT throws_ok($$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts) VALUES ('security', 't', now(), 1)$$,
    '42501', NULL, 'a producer cannot insert into taskboard.jobs directly');
SELECT throws_ok($$UPDATE taskboard.jobs SET priority = 1$$, '42501', NULL,
    'a producer cannot update taskboard.jobs directly');
SELECT throws_ok($$DELETE FROM taskboard.jobs$$, '42501', NULL,
    'a producer cannot delete from taskboard.jobs directly');
SELECT lives_ok($$SELECT * FROM taskboard.queue_stats$$,
    'a producer can read taskboard.queue_stats');
SELECT throws_ok($$SELECT * FROM taskboard.claim(queue => 'security', worker => 'w')$$, '42501', NULL,
    'a producer cannot claim jobs');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT throws_ok($$SELECT * FROM taskboard.jobs$$, '42501', NULL,
    'a worker cannot read taskboard.jobs directly');
SELECT throws_ok($$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts) VALUES ('security', 't', now(), 1)$$,
    '42501', NULL, 'a worker cannot insert into taskboard.jobs directly');
SELECT throws_ok($$UPDATE taskboard.jobs SET lease_expires_at = now() + interval '1 day'$$, '42501', NULL,
    'a worker cannot update taskboard.jobs directly, so it cannot stretch a lease around the fence');
SELECT throws_ok($$DELETE FROM taskboard.jobs$$, '42501', NULL,
    'a worker cannot delete from taskboard.jobs directly');
SELECT lives_ok($$SELECT * FROM taskboard.queue_stats$$,
    'a worker can read taskboard.queue_stats');
SELECT throws_ok($$SELECT taskboard.cancel(job_id => 1)$$, '42501', NULL,
    'a worker cannot cancel jobs');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT * FROM taskboard.jobs$$, '42501', NULL,
    'an admin cannot read taskboard.jobs directly');
SELECT throws_ok($$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts) VALUES ('security', 't', now(), 1)$$,
    '42501', NULL, 'an admin cannot insert into taskboard.jobs directly');
SELECT throws_ok($$UPDATE taskboard.jobs SET state = 'cancelled'$$, '42501', NULL,
    'an admin cannot update taskboard.jobs directly');
SELECT throws_ok($$DELETE FROM taskboard.jobs$$, '42501', NULL,
    'an admin cannot delete from taskboard.jobs directly');
SELECT lives_ok($$SELECT * FROM taskboard.queue_stats$$,
    'an admin can read taskboard.queue_stats');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
