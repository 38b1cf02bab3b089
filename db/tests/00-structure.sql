-- Structure: the schema, the jobs table with its named invariants and the
-- indexes claim, dedupe and the readers rely on, the row types the API returns, and
-- every function with its exact signature (names, types, defaults) and
-- result. One signature per function: no name may have two.
--
-- The constraint checks insert rows directly as taskboard_owner, the only
-- role that writes the table.

BEGIN;
SELECT plan(126);

-- Schema --------------------------------------------------------------------

SELECT has_schema('taskboard', 'the taskboard schema exists');

SELECT tables_are('taskboard', ARRAY['jobs', 'queues', 'schedule_slots', 'job_events', 'queue_starts',
                                     'job_dependencies', 'dependency_checks'],
    'jobs, queues, schedule_slots, job_events, queue_starts, job_dependencies and dependency_checks are the only tables in the schema');

SELECT views_are('taskboard', ARRAY['queue_stats', 'schedules'], 'queue_stats and schedules are the only views in the schema');

-- The jobs table ------------------------------------------------------------

SELECT columns_are('taskboard', 'jobs', ARRAY[
    'id', 'queue', 'task', 'payload', 'state', 'priority', 'run_at', 'attempt',
    'max_attempts', 'dedupe_key', 'lease_token', 'lease_expires_at', 'claimed_by',
    'idempotency_key', 'result', 'errors', 'created_at', 'finished_at', 'fence', 'started_at',
    'trace_context', 'held_until', 'concurrency_key', 'dependencies_left', 'on_dependency_failure',
    'has_dependents'
], 'jobs has exactly the documented columns');

SELECT col_type_is('taskboard', 'jobs', 'id',               'bigint',                   'jobs.id is a bigint');
SELECT col_type_is('taskboard', 'jobs', 'queue',            'text',                     'jobs.queue is text');
SELECT col_type_is('taskboard', 'jobs', 'task',             'text',                     'jobs.task is text');
SELECT col_type_is('taskboard', 'jobs', 'payload',          'jsonb',                    'jobs.payload is jsonb');
SELECT col_type_is('taskboard', 'jobs', 'state',            'text',                     'jobs.state is text, constrained by a CHECK list');
SELECT col_type_is('taskboard', 'jobs', 'priority',         'integer',                  'jobs.priority is an integer');
SELECT col_type_is('taskboard', 'jobs', 'run_at',           'timestamp with time zone', 'jobs.run_at is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'attempt',          'integer',                  'jobs.attempt is an integer');
SELECT col_type_is('taskboard', 'jobs', 'max_attempts',     'integer',                  'jobs.max_attempts is an integer');
SELECT col_type_is('taskboard', 'jobs', 'dedupe_key',       'text',                     'jobs.dedupe_key is text');
SELECT col_type_is('taskboard', 'jobs', 'lease_token',      'uuid',                     'jobs.lease_token is a uuid');
SELECT col_type_is('taskboard', 'jobs', 'lease_expires_at', 'timestamp with time zone', 'jobs.lease_expires_at is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'claimed_by',       'text',                     'jobs.claimed_by is text');
SELECT col_type_is('taskboard', 'jobs', 'idempotency_key',  'uuid',                     'jobs.idempotency_key is a uuid');
SELECT col_type_is('taskboard', 'jobs', 'result',           'jsonb',                    'jobs.result is jsonb');
SELECT col_type_is('taskboard', 'jobs', 'errors',           'jsonb',                    'jobs.errors is jsonb');
SELECT col_type_is('taskboard', 'jobs', 'created_at',       'timestamp with time zone', 'jobs.created_at is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'finished_at',      'timestamp with time zone', 'jobs.finished_at is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'fence',            'bigint',                   'jobs.fence is a bigint');
SELECT col_type_is('taskboard', 'jobs', 'started_at',       'timestamp with time zone', 'jobs.started_at is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'trace_context',    'jsonb',                    'jobs.trace_context is jsonb');
SELECT col_type_is('taskboard', 'jobs', 'held_until',       'timestamp with time zone', 'jobs.held_until is a timestamptz');
SELECT col_type_is('taskboard', 'jobs', 'concurrency_key',  'text',                     'jobs.concurrency_key is text');

SELECT set_eq(
    $$SELECT a.attname::text
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.jobs'::regclass
         AND a.attnum > 0
         AND NOT a.attisdropped
         AND NOT a.attnotnull$$,
    ARRAY['dedupe_key', 'lease_token', 'lease_expires_at', 'claimed_by', 'result', 'finished_at',
          'started_at', 'trace_context', 'held_until', 'concurrency_key', 'dependencies_left',
          'on_dependency_failure'],
    'only the keys, the lease, the result, finished_at, started_at, trace_context, held_until and the dependencies may be NULL; every other column is NOT NULL'
);

SELECT col_is_pk('taskboard', 'jobs', 'id', 'jobs.id is the primary key');

SELECT set_eq(
    $$SELECT c.conname::text
        FROM pg_catalog.pg_constraint AS c
       WHERE c.conrelid = 'taskboard.jobs'::regclass
         AND c.contype = 'c'$$,
    ARRAY[
        'jobs_state_known', 'jobs_finished_at_iff_terminal', 'jobs_running_has_lease',
        'jobs_queue_not_empty', 'jobs_task_not_empty', 'jobs_max_attempts_positive',
        'jobs_attempt_within_max', 'jobs_errors_is_array', 'jobs_fence_not_negative',
        'jobs_concurrency_key_named', 'jobs_waiting_has_dependencies', 'jobs_on_dependency_failure_known'
    ],
    'the invariants of jobs are named CHECK constraints'
);

SELECT set_eq(
    $$SELECT m[1]
        FROM pg_catalog.pg_constraint AS c,
             regexp_matches(pg_catalog.pg_get_constraintdef(c.oid), '''([a-z]+)''', 'g') AS m
       WHERE c.conrelid = 'taskboard.jobs'::regclass
         AND c.conname = 'jobs_state_known'$$,
    ARRAY['waiting', 'queued', 'running', 'succeeded', 'dead', 'cancelled'],
    'jobs_state_known lists exactly the six states'
);

-- Each invariant bites. Rows are written as the table owner.

SET LOCAL ROLE taskboard_owner;

SELECT lives_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts)
      VALUES ('structure', 'ok', pg_catalog.clock_timestamp(), 1)$$,
    'a queued job without a finish time is a valid row'
);
SELECT lives_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, state, attempt,
                                  lease_token, lease_expires_at, claimed_by)
      VALUES ('structure', 'ok', pg_catalog.clock_timestamp(), 1, 'running', 1,
              pg_catalog.gen_random_uuid(), pg_catalog.clock_timestamp() + interval '1 minute', 'w')$$,
    'a running job with a token, a deadline and a worker is a valid row'
);
SELECT lives_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, state, finished_at)
      VALUES ('structure', 'ok', pg_catalog.clock_timestamp(), 1, 'succeeded', pg_catalog.clock_timestamp()),
             ('structure', 'ok', pg_catalog.clock_timestamp(), 1, 'dead',      pg_catalog.clock_timestamp()),
             ('structure', 'ok', pg_catalog.clock_timestamp(), 1, 'cancelled', pg_catalog.clock_timestamp())$$,
    'succeeded, dead and cancelled jobs with a finish time are valid rows'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, state)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 1, 'paused')$$,
    '23514', NULL,
    'a state outside the five is rejected (jobs_state_known)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, finished_at)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 1, pg_catalog.clock_timestamp())$$,
    '23514', NULL,
    'a queued job cannot carry a finish time (jobs_finished_at_iff_terminal)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, state)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 1, 'dead')$$,
    '23514', NULL,
    'a terminal job must carry a finish time (jobs_finished_at_iff_terminal)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, state, attempt, claimed_by,
                                  lease_expires_at)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 1, 'running', 1, 'w',
              pg_catalog.clock_timestamp())$$,
    '23514', NULL,
    'a running job must carry a lease token (jobs_running_has_lease)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts)
      VALUES ('', 'bad', pg_catalog.clock_timestamp(), 1)$$,
    '23514', NULL,
    'an empty queue name is rejected (jobs_queue_not_empty)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts)
      VALUES ('structure', '', pg_catalog.clock_timestamp(), 1)$$,
    '23514', NULL,
    'an empty task name is rejected (jobs_task_not_empty)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 0)$$,
    '23514', NULL,
    'max_attempts below 1 is rejected (jobs_max_attempts_positive)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, attempt)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 2, 3)$$,
    '23514', NULL,
    'attempt above max_attempts is rejected (jobs_attempt_within_max)'
);
SELECT throws_ok(
    $$INSERT INTO taskboard.jobs (queue, task, run_at, max_attempts, errors)
      VALUES ('structure', 'bad', pg_catalog.clock_timestamp(), 1, '{"error": "x"}')$$,
    '23514', NULL,
    'errors must be a JSON array (jobs_errors_is_array)'
);

RESET ROLE;

-- Indexes -------------------------------------------------------------------

SELECT indexes_are('taskboard', 'jobs', ARRAY[
    'jobs_pkey', 'jobs_queued_claim_order', 'jobs_running_by_queue',
    'jobs_unfinished_task_dedupe_key', 'jobs_finished_at', 'jobs_failed_by_queue',
    'jobs_unfinished_last_failure', 'jobs_held_by_queue', 'jobs_holders_by_key', 'jobs_with_dependents',
    'jobs_waiting_by_queue'
], 'jobs has exactly the primary key and the ten documented indexes');

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_held_by_queue'::regclass),
    'CREATE INDEX jobs_held_by_queue ON taskboard.jobs USING btree (queue, held_until) WHERE (held_until IS NOT NULL)',
    'the held index finds a queue''s places held by a cancelled lease, by deadline'
);

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_queued_claim_order'::regclass),
    'CREATE INDEX jobs_queued_claim_order ON taskboard.jobs USING btree (queue, priority DESC, run_at, id) WHERE (state = ''queued''::text)',
    'the claim index holds only queued jobs, in claim order: priority descending, run_at, id'
);

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_running_by_queue'::regclass),
    'CREATE INDEX jobs_running_by_queue ON taskboard.jobs USING btree (queue) WHERE (state = ''running''::text)',
    'the running index holds only running jobs, by queue, and leaves lease_expires_at unindexed'
);

SELECT index_is_unique('taskboard', 'jobs', 'jobs_unfinished_task_dedupe_key',
    'the dedupe index is unique');

SET LOCAL standard_conforming_strings TO on;
SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_unfinished_task_dedupe_key'::regclass),
    'CREATE UNIQUE INDEX jobs_unfinished_task_dedupe_key ON taskboard.jobs USING btree (queue, task, sha256(decode(replace(dedupe_key, ''\''::text, ''\\''::text), ''escape''::text))) WHERE ((dedupe_key IS NOT NULL) AND (state = ANY (ARRAY[''queued''::text, ''running''::text])))',
    'the dedupe index covers (queue, task, SHA-256 of the key) of unfinished jobs that have a key'
);

SELECT is(
    (SELECT pg_catalog.string_agg(p.provolatile::text, '' ORDER BY p.oid)
       FROM pg_catalog.pg_proc AS p
      WHERE p.oid IN ('pg_catalog.sha256(bytea)'::regprocedure,
                      'pg_catalog.decode(text, text)'::regprocedure,
                      'pg_catalog.replace(text, text, text)'::regprocedure)),
    'iii',
    'sha256, decode and replace, which the dedupe index expression calls, are IMMUTABLE'
);

SELECT is(
    (SELECT pg_catalog.count(*)
       FROM (VALUES ('a\b'), ('\x41'), ('\101'), ('\'), ('\\'), ('A'), ('a\\b\')) AS k(key)
      WHERE pg_catalog.decode(pg_catalog.replace(k.key, E'\\', E'\\\\'), 'escape')
            IS DISTINCT FROM pg_catalog.convert_to(k.key, pg_catalog.current_setting('server_encoding'))),
    0::bigint,
    'the hashed bytes are the key''s own bytes, backslashes and escapes included: distinct keys never hash the same input'
);

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_finished_at'::regclass),
    'CREATE INDEX jobs_finished_at ON taskboard.jobs USING btree (finished_at) WHERE (finished_at IS NOT NULL)',
    'the prune index holds only finished jobs, by finish time'
);

SELECT is(
    pg_catalog.pg_get_indexdef('taskboard.jobs_failed_by_queue'::regclass),
    'CREATE INDEX jobs_failed_by_queue ON taskboard.jobs USING btree (state, queue, id) WHERE (state = ANY (ARRAY[''dead''::text, ''cancelled''::text]))',
    'the failed index holds only dead and cancelled jobs, by state, queue and id: succeeded jobs write nothing to it'
);

SELECT ok(
    NOT EXISTS (
        SELECT
          FROM pg_catalog.pg_index AS i,
               pg_catalog.generate_series(0, i.indnatts - 1) AS k
         WHERE i.indrelid = 'taskboard.jobs'::regclass
           AND i.indkey[k] = (SELECT a.attnum
                                FROM pg_catalog.pg_attribute AS a
                               WHERE a.attrelid = 'taskboard.jobs'::regclass
                                 AND a.attname = 'lease_expires_at')
    ),
    'no index covers lease_expires_at, so renewals can be HOT updates'
);

-- Row types -----------------------------------------------------------------

SELECT types_are('taskboard', ARRAY['claimed', 'job_info', 'job_summary'],
    'claimed, job_info and job_summary are the only types of the schema besides row types of relations');

SELECT has_composite('taskboard', 'claimed', 'taskboard.claimed is a composite type');

SELECT results_eq(
    $$SELECT a.attname::text COLLATE "default", pg_catalog.format_type(a.atttypid, a.atttypmod)
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.claimed'::regclass
         AND a.attnum > 0
         AND NOT a.attisdropped
       ORDER BY a.attnum$$,
    $$VALUES ('job_id', 'bigint'),
             ('token', 'uuid'),
             ('task', 'text'),
             ('payload', 'jsonb'),
             ('attempt', 'integer'),
             ('lease_expires_at', 'timestamp with time zone'),
             ('idempotency_key', 'uuid'),
             ('fence', 'bigint'),
             ('trace_context', 'jsonb'),
             ('waited', 'interval')$$,
    'taskboard.claimed has exactly ten columns in order: fence, trace_context, then waited last'
);

SELECT has_composite('taskboard', 'job_info', 'taskboard.job_info is a composite type');

SELECT results_eq(
    $$SELECT a.attname::text COLLATE "default", pg_catalog.format_type(a.atttypid, a.atttypmod)
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.job_info'::regclass
         AND a.attnum > 0
         AND NOT a.attisdropped
       ORDER BY a.attnum$$,
    $$VALUES ('job_id', 'bigint'),
             ('queue', 'text'),
             ('task', 'text'),
             ('state', 'text'),
             ('attempt', 'integer'),
             ('max_attempts', 'integer'),
             ('priority', 'integer'),
             ('run_at', 'timestamp with time zone'),
             ('created_at', 'timestamp with time zone'),
             ('finished_at', 'timestamp with time zone'),
             ('result', 'jsonb'),
             ('errors', 'jsonb'),
             ('started_at', 'timestamp with time zone'),
             ('payload', 'jsonb'),
             ('fence', 'bigint'),
             ('concurrency_key', 'text'),
             ('waiting_for', 'bigint[]')$$,
    'taskboard.job_info has the documented seventeen columns in order, concurrency_key and waiting_for last, and no lease column'
);

-- Functions -----------------------------------------------------------------

SELECT functions_are('taskboard', ARRAY[
    'enqueue', 'enqueue_many', 'claim', 'renew', 'renew_many', 'complete', 'complete_many',
    'fail', 'release', 'lease_state', 'cancel', 'retry', 'prune', 'get_job', 'version',
    'notify_runnable', 'pause', 'resume', 'set_queue_limit', 'find_jobs', 'enqueue_periodic',
    'queue_overview', 'job_activity', 'check_name', 'check_interval', 'check_time',
    'find_jobs_summary', 'last_failure_at', 'remove_schedule', 'job_history', 'worker_leases', 'revert_losses',
    'set_key_limit', 'set_rate_limit', 'settle_dependents', 'enqueue_waiting', 'recheck_dependencies',
    'record_refusals', 'check_arg', 'check_given', 'check_key', 'check_items', 'check_flat', 'check_lengths',
    'check_between', 'check_limit', 'check_choice', 'check_trace_context', 'check_delay', 'check_recent', 'set_limit', 'grant_leases',
    'pick_queued', 'pick_expired', 'pick_keyed', 'bury_spent', 'queue_room', 'window_room', 'full_keys', 'rate_full_keys',
    'find_ids', 'check_leases', 'check_lease', 'complete_held', 'set_queue_discard', 'discard_held', 'pick_next'
], 'the schema has exactly the documented functions');

SELECT is_empty(
    $$SELECT p.proname
        FROM pg_catalog.pg_proc AS p
       WHERE p.pronamespace = 'taskboard'::regnamespace
       GROUP BY p.proname
      HAVING pg_catalog.count(*) > 1$$,
    'no function name has two signatures'
);

-- For each function: it exists with these argument types, and its full
-- argument list (names, types, defaults) and result read as documented.
-- The signature is looked up by name so that a missing function fails its
-- assertion instead of aborting the file.

SELECT has_function('taskboard', 'enqueue',
    ARRAY['text', 'jsonb', 'text', 'timestamp with time zone', 'integer', 'integer', 'text', 'jsonb', 'text',
          'bigint[]', 'text'],
    'enqueue(text, jsonb, text, timestamptz, integer, integer, text, jsonb, text, bigint[], text) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'enqueue'),
    'task text, payload jsonb DEFAULT ''{}''::jsonb, queue text DEFAULT ''default''::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_key text DEFAULT NULL::text, trace_context jsonb DEFAULT NULL::jsonb, concurrency_key text DEFAULT NULL::text, depends_on bigint[] DEFAULT NULL::bigint[], on_dependency_failure text DEFAULT ''cancel''::text -> bigint',
    'enqueue takes task, payload {}, queue default, run_at NULL, priority 0, max_attempts 5, dedupe_key NULL, trace_context NULL, concurrency_key NULL, depends_on NULL, on_dependency_failure cancel and returns bigint'
);

SELECT has_function('taskboard', 'enqueue_many',
    ARRAY['text', 'jsonb[]', 'text', 'timestamp with time zone', 'integer', 'integer', 'text[]', 'jsonb', 'text[]'],
    'enqueue_many(text, jsonb[], text, timestamptz, integer, integer, text[], jsonb, text[]) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'enqueue_many'),
    'task text, payloads jsonb[], queue text DEFAULT ''default''::text, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, dedupe_keys text[] DEFAULT NULL::text[], trace_context jsonb DEFAULT NULL::jsonb, concurrency_keys text[] DEFAULT NULL::text[] -> SETOF bigint',
    'enqueue_many takes task, payloads, queue default, run_at NULL, priority 0, max_attempts 5, dedupe_keys NULL, trace_context NULL, concurrency_keys NULL and returns setof bigint'
);

SELECT has_function('taskboard', 'claim',
    ARRAY['text', 'text', 'integer', 'interval'],
    'claim(text, text, integer, interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'claim'),
    'queue text, worker text, batch integer DEFAULT 1, lease interval DEFAULT ''00:01:00''::interval -> SETOF taskboard.claimed',
    'claim takes queue, worker, batch 1, lease 60 seconds and returns setof taskboard.claimed'
);

SELECT has_function('taskboard', 'renew',
    ARRAY['bigint', 'uuid', 'interval'],
    'renew(bigint, uuid, interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'renew'),
    'job_id bigint, token uuid, lease interval DEFAULT ''00:01:00''::interval -> timestamp with time zone',
    'renew takes job_id, token, lease 60 seconds and returns timestamptz'
);

SELECT has_function('taskboard', 'renew_many',
    ARRAY['bigint[]', 'uuid[]', 'interval'],
    'renew_many(bigint[], uuid[], interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'renew_many'),
    'job_ids bigint[], tokens uuid[], lease interval DEFAULT ''00:01:00''::interval -> TABLE(job_id bigint, lease_expires_at timestamp with time zone)',
    'renew_many takes job_ids, tokens, lease 60 seconds and returns setof (job_id, lease_expires_at)'
);

SELECT has_function('taskboard', 'complete',
    ARRAY['bigint', 'uuid', 'jsonb'],
    'complete(bigint, uuid, jsonb) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'complete'),
    'job_id bigint, token uuid, result jsonb DEFAULT NULL::jsonb -> boolean',
    'complete takes job_id, token, result NULL and returns boolean'
);

SELECT has_function('taskboard', 'complete_many',
    ARRAY['bigint[]', 'uuid[]', 'jsonb[]'],
    'complete_many(bigint[], uuid[], jsonb[]) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'complete_many'),
    'job_ids bigint[], tokens uuid[], results jsonb[] DEFAULT NULL::jsonb[] -> TABLE(job_id bigint, completed boolean)',
    'complete_many takes job_ids, tokens, results NULL and returns setof (job_id, completed)'
);

SELECT has_function('taskboard', 'fail',
    ARRAY['bigint', 'uuid', 'text', 'interval', 'boolean', 'text'],
    'fail(bigint, uuid, text, interval, boolean, text) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'fail'),
    'job_id bigint, token uuid, error text, retry_in interval DEFAULT NULL::interval, retry boolean DEFAULT true, traceback text DEFAULT NULL::text -> text',
    'fail takes job_id, token, error, retry_in NULL, retry true, traceback NULL and returns text'
);

SELECT has_function('taskboard', 'release',
    ARRAY['bigint', 'uuid', 'interval'],
    'release(bigint, uuid, interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'release'),
    'job_id bigint, token uuid, delay interval DEFAULT ''00:00:00''::interval -> boolean',
    'release takes job_id, token, delay 0 and returns boolean'
);

SELECT has_function('taskboard', 'lease_state',
    ARRAY['bigint', 'uuid'],
    'lease_state(bigint, uuid) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'lease_state'),
    'job_id bigint, token uuid -> text',
    'lease_state takes job_id, token and returns text'
);

SELECT has_function('taskboard', 'cancel',
    ARRAY['bigint'],
    'cancel(bigint) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'cancel'),
    'job_id bigint -> boolean',
    'cancel takes job_id and returns boolean'
);

SELECT has_function('taskboard', 'retry',
    ARRAY['bigint'],
    'retry(bigint) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'retry'),
    'job_id bigint -> boolean',
    'retry takes job_id and returns boolean'
);

SELECT has_function('taskboard', 'pause', ARRAY['text'], 'pause(text) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'pause'),
    'queue text -> boolean',
    'pause takes queue and returns boolean'
);
SELECT has_function('taskboard', 'resume', ARRAY['text'], 'resume(text) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'resume'),
    'queue text -> boolean',
    'resume takes queue and returns boolean'
);
SELECT has_function('taskboard', 'set_queue_limit', ARRAY['text', 'integer'], 'set_queue_limit(text, integer) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'set_queue_limit'),
    'queue text, max_running integer -> boolean',
    'set_queue_limit takes queue and max_running and returns boolean'
);

-- The queues table: settings of the queues that have any.
SELECT columns_are('taskboard', 'queues', ARRAY['queue', 'paused', 'max_running', 'updated_at', 'max_running_per_key',
                                                'rate_starts', 'rate_per', 'rate_by_key', 'discard_succeeded'],
    'queues has exactly the documented columns');
SELECT col_is_pk('taskboard', 'queues', 'queue', 'a queue has one row of settings at most');
SELECT col_not_null('taskboard', 'queues', 'paused', 'queues.paused is never NULL');
SELECT col_is_null('taskboard', 'queues', 'max_running', 'queues.max_running may be NULL: no limit');
SELECT col_not_null('taskboard', 'queues', 'rate_by_key', 'queues.rate_by_key is never NULL');
SELECT col_not_null('taskboard', 'queues', 'discard_succeeded', 'queues.discard_succeeded is never NULL');
SELECT col_default_is('taskboard', 'queues', 'discard_succeeded', 'false', 'a queue keeps its jobs unless set to discard');

-- The rate limit's log of starts: written and pruned by claim.
SELECT columns_are('taskboard', 'queue_starts', ARRAY['queue', 'concurrency_key', 'started_at'],
    'queue_starts has exactly the documented columns');
SELECT indexes_are('taskboard', 'queue_starts', ARRAY['queue_starts_by_time', 'queue_starts_by_key'],
    'queue_starts is read by queue and time, and by queue, key and time');
SELECT is_empty(
    $$SELECT r.rolname, pg_catalog.has_table_privilege(r.oid, 'taskboard.queue_starts', 'SELECT,INSERT,UPDATE,DELETE')
        FROM pg_catalog.pg_roles AS r
       WHERE r.rolname IN ('taskboard_producer', 'taskboard_worker', 'taskboard_admin')
         AND pg_catalog.has_table_privilege(r.oid, 'taskboard.queue_starts', 'SELECT,INSERT,UPDATE,DELETE')$$,
    'no application role reads or writes queue_starts directly'
);
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'set_rate_limit'),
    'queue text, starts integer, per interval, by_key boolean DEFAULT false -> boolean',
    'set_rate_limit takes queue, starts, per and by_key (false by default) and returns boolean'
);

-- Periodic jobs: enqueue_periodic and the table behind taskboard.schedules.
SELECT has_function('taskboard', 'enqueue_periodic',
    ARRAY['text', 'timestamp with time zone', 'text', 'jsonb', 'text', 'integer', 'integer', 'text[]'],
    'enqueue_periodic(text, timestamptz, text, jsonb, text, integer, integer, text[]) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'enqueue_periodic'),
    'schedule text, slot timestamp with time zone, task text, payload jsonb DEFAULT ''{}''::jsonb, queue text DEFAULT ''default''::text, priority integer DEFAULT 0, max_attempts integer DEFAULT 5, previous_names text[] DEFAULT ''{}''::text[] -> bigint',
    'enqueue_periodic takes schedule, slot, task, payload {}, queue default, priority 0, max_attempts 5, previous_names {} and returns bigint'
);
SELECT columns_are('taskboard', 'schedule_slots', ARRAY['schedule', 'last_slot', 'last_job_id', 'updated_at', 'task', 'queue'],
    'schedule_slots has exactly the documented columns');
SELECT col_is_pk('taskboard', 'schedule_slots', 'schedule', 'a schedule has one row at most');
SELECT col_not_null('taskboard', 'schedule_slots', 'last_slot', 'schedule_slots.last_slot is never NULL');
SELECT set_eq(
    $$SELECT c.conname::text
        FROM pg_catalog.pg_constraint AS c
       WHERE c.conrelid = 'taskboard.schedule_slots'::regclass
         AND c.contype = 'c'$$,
    ARRAY['schedule_slots_schedule_named', 'schedule_slots_last_slot_finite'],
    'the invariants of schedule_slots are named CHECK constraints'
);
SELECT results_eq(
    $$SELECT a.attname::text COLLATE "default", pg_catalog.format_type(a.atttypid, a.atttypmod)
        FROM pg_catalog.pg_attribute AS a
       WHERE a.attrelid = 'taskboard.schedules'::regclass
         AND a.attnum > 0
         AND NOT a.attisdropped
       ORDER BY a.attnum$$,
    $$VALUES ('schedule', 'text'),
             ('last_slot', 'timestamp with time zone'),
             ('last_job_id', 'bigint'),
             ('task', 'text'),
             ('queue', 'text')$$,
    'taskboard.schedules has exactly schedule, last_slot, last_job_id, task and queue, in order'
);

SELECT has_function('taskboard', 'prune',
    ARRAY['interval', 'integer'],
    'prune(interval, integer) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'prune'),
    'older_than interval, batch integer DEFAULT 10000 -> bigint',
    'prune takes older_than, batch 10000 and returns bigint'
);

SELECT has_function('taskboard', 'get_job',
    ARRAY['bigint'],
    'get_job(bigint) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'get_job'),
    'job_id bigint -> taskboard.job_info',
    'get_job takes job_id and returns one taskboard.job_info'
);

SELECT has_function('taskboard', 'find_jobs',
    ARRAY['text', 'text', 'text', 'bigint', 'integer'],
    'find_jobs(text, text, text, bigint, integer) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'find_jobs'),
    'queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, '
    'after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50 -> SETOF taskboard.job_info',
    'find_jobs takes queue, state, task, after_id, max_rows 50 and returns a set of taskboard.job_info'
);

SELECT has_function('taskboard', 'find_jobs_summary',
    ARRAY['text', 'text', 'text', 'bigint', 'integer'],
    'find_jobs_summary(text, text, text, bigint, integer) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'find_jobs_summary'),
    'queue text DEFAULT NULL::text, state text DEFAULT NULL::text, task text DEFAULT NULL::text, '
    'after_id bigint DEFAULT NULL::bigint, max_rows integer DEFAULT 50 -> SETOF taskboard.job_summary',
    'find_jobs_summary takes find_jobs'' arguments and returns a set of taskboard.job_summary'
);

SELECT has_function('taskboard', 'queue_overview', ARRAY['interval'], 'queue_overview(interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'queue_overview'),
    'recent interval DEFAULT ''01:00:00''::interval -> TABLE(queue text, queued bigint, running bigint, runnable bigint, '
    'oldest_runnable_at timestamp with time zone, dead bigint, cancelled bigint, succeeded_recent bigint, '
    'dead_recent bigint, cancelled_recent bigint, paused boolean, max_running integer, max_running_per_key integer, '
    'rate_starts integer, rate_per interval, rate_by_key boolean, window_starts bigint, waiting bigint)',
    'queue_overview takes recent, one hour by default, and returns one documented row per queue'
);

SELECT has_function('taskboard', 'job_activity', ARRAY['interval'], 'job_activity(interval) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'job_activity'),
    'recent interval DEFAULT ''01:00:00''::interval -> TABLE(minute_start timestamp with time zone, queue text, '
    'succeeded bigint, failed bigint, dead bigint, cancelled bigint)',
    'job_activity takes recent, one hour by default, and returns minute_start, queue and four counts'
);

SELECT has_function('taskboard', 'version',
    ARRAY[]::name[],
    'version() exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'version'),
    ' -> text',
    'version takes no argument and returns text'
);

SELECT has_function('taskboard', 'notify_runnable',
    ARRAY['text'],
    'notify_runnable(text) exists');
SELECT is(
    (SELECT pg_catalog.string_agg(pg_catalog.pg_get_function_arguments(p.oid) || ' -> ' || pg_catalog.pg_get_function_result(p.oid), '; ')
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace AND p.proname = 'notify_runnable'),
    'queue text -> void',
    'notify_runnable takes queue and returns void'
);

SELECT is_empty(
    $$SELECT p.proname
        FROM pg_catalog.pg_proc AS p
       WHERE p.pronamespace = 'taskboard'::regnamespace
         AND p.prokind <> 'f'$$,
    'the schema has no procedures, aggregates or window functions'
);

SELECT * FROM finish();
ROLLBACK;
