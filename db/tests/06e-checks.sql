-- The shared argument checks (check_arg, check_given, check_key, check_items,
-- check_flat, check_lengths, check_between, check_limit, check_choice,
-- check_trace_context, check_delay, check_recent, check_lease, check_leases):
-- each returns (void) for what it accepts and raises 22023 with the message the
-- public functions' tests assert for what it refuses. check_name,
-- check_interval and check_time have files of their own. Internal: the
-- application roles cannot call them, the owner's functions do.

BEGIN;
SELECT plan(62);

-- Who may: the owner only ---------------------------------------------------------

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_arg(true, 'never')$$, '42501', NULL, 'an admin cannot call check_arg');
SELECT throws_ok($$SELECT taskboard.check_given('queue', 'q'::text)$$, '42501', NULL, 'an admin cannot call check_given');
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', 'k', 10, 'NULL means none')$$, '42501', NULL, 'an admin cannot call check_key');
SELECT throws_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,2]::bigint[])$$, '42501', NULL, 'an admin cannot call check_items');
SELECT throws_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 1)$$, '42501', NULL, 'an admin cannot call check_flat');
SELECT throws_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 2)$$, '42501', NULL, 'an admin cannot call check_lengths');
SELECT throws_ok($$SELECT taskboard.check_between('batch', 5, 1, 1000)$$, '42501', NULL, 'an admin cannot call check_between');
SELECT throws_ok($$SELECT taskboard.check_limit('max_running', 3, 10000, 'no limit')$$, '42501', NULL, 'an admin cannot call check_limit');
SELECT throws_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'run', 'cancel', 'run')$$, '42501', NULL, 'an admin cannot call check_choice');
SELECT throws_ok($$SELECT taskboard.check_trace_context('{"traceparent": "x"}')$$, '42501', NULL, 'an admin cannot call check_trace_context');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '1 hour', '1 year')$$, '42501', NULL, 'an admin cannot call check_delay');
SELECT throws_ok($$SELECT taskboard.check_recent('1 hour')$$, '42501', NULL, 'an admin cannot call check_recent');
SELECT throws_ok($$SELECT taskboard.check_lease(1, gen_random_uuid())$$, '42501', NULL, 'an admin cannot call check_lease');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()])$$, '42501', NULL, 'an admin cannot call check_leases');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;

-- check_arg
SELECT lives_ok($$SELECT taskboard.check_arg(true, 'never')$$, 'check_arg(true, ''never'') passes');
SELECT throws_ok($$SELECT taskboard.check_arg(false, 'x must be y')$$, '22023', 'x must be y',
    'check_arg(false, ''x must be y'') is refused');
SELECT throws_ok($$SELECT taskboard.check_arg(NULL, 'a NULL rule fails')$$, '22023', 'a NULL rule fails',
    'check_arg(NULL, ''a NULL rule fails'') is refused');

-- check_given
SELECT lives_ok($$SELECT taskboard.check_given('queue', 'q'::text)$$, 'check_given(''queue'', ''q''::text) passes');
SELECT throws_ok($$SELECT taskboard.check_given('queue', NULL::text)$$, '22023', 'queue must not be NULL',
    'check_given(''queue'', NULL::text) is refused');
SELECT throws_ok($$SELECT taskboard.check_given('lease', NULL::interval, 'give a lease')$$, '22023', 'lease must not be NULL (give a lease)',
    'check_given(''lease'', NULL::interval, ''give a lease'') is refused');

-- check_key
SELECT lives_ok($$SELECT taskboard.check_key('dedupe_key', 'k', 10, 'NULL means none')$$, 'check_key(''dedupe_key'', ''k'', 10, ''NULL means none'') passes');
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', '', 10, 'NULL means none')$$, '22023', 'dedupe_key must not be empty (NULL means none)',
    'check_key(''dedupe_key'', '''', 10, ''NULL means none'') is refused');
SELECT throws_ok($$SELECT taskboard.check_key('dedupe_key', repeat('k', 11), 10, 'NULL means none')$$, '22023', 'dedupe_key must be at most 10 characters, got 11',
    'check_key(''dedupe_key'', repeat(''k'', 11), 10, ''NULL means none'') is refused');
SELECT lives_ok($$SELECT taskboard.check_key('dedupe_key', NULL, 10, 'NULL means none')$$, 'check_key(''dedupe_key'', NULL, 10, ''NULL means none'') passes');

-- check_items
SELECT lives_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,2]::bigint[])$$, 'check_items(''job_ids'', ARRAY[1,2]::bigint[]) passes');
SELECT throws_ok($$SELECT taskboard.check_items('job_ids', ARRAY[1,NULL]::bigint[])$$, '22023', 'job_ids must not contain NULL',
    'check_items(''job_ids'', ARRAY[1,NULL]::bigint[]) is refused');

-- check_flat
SELECT lives_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 1)$$, 'check_flat(''job_ids and tokens'', 1, 1) passes');
SELECT throws_ok($$SELECT taskboard.check_flat('job_ids and tokens', 1, 2)$$, '22023', 'job_ids and tokens must be one-dimensional arrays',
    'check_flat(''job_ids and tokens'', 1, 2) is refused');

-- check_lengths
SELECT lives_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 2)$$, 'check_lengths(''job_ids'', 2, ''tokens'', 2) passes');
SELECT throws_ok($$SELECT taskboard.check_lengths('job_ids', 2, 'tokens', 3)$$, '22023', 'job_ids has 2 elements but tokens has 3',
    'check_lengths(''job_ids'', 2, ''tokens'', 3) is refused');

-- check_between
SELECT lives_ok($$SELECT taskboard.check_between('batch', 5, 1, 1000)$$, 'check_between(''batch'', 5, 1, 1000) passes');
SELECT throws_ok($$SELECT taskboard.check_between('batch', 0, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got 0',
    'check_between(''batch'', 0, 1, 1000) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('batch', 1001, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got 1001',
    'check_between(''batch'', 1001, 1, 1000) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('priority', -5, 0)$$, '22023', 'priority must be at least 0, got -5',
    'check_between(''priority'', -5, 0) is refused');
SELECT throws_ok($$SELECT taskboard.check_between('batch', NULL, 1, 1000)$$, '22023', 'batch must be between 1 and 1000, got NULL',
    'check_between(''batch'', NULL, 1, 1000) is refused');

-- check_limit
SELECT lives_ok($$SELECT taskboard.check_limit('max_running', 3, 10000, 'no limit')$$, 'check_limit(''max_running'', 3, 10000, ''no limit'') passes');
SELECT throws_ok($$SELECT taskboard.check_limit('max_running', 0, 10000, 'no limit')$$, '22023', 'max_running must be between 1 and 10000 or NULL (no limit), got 0; pause the queue to stop it',
    'check_limit(''max_running'', 0, 10000, ''no limit'') is refused');
SELECT lives_ok($$SELECT taskboard.check_limit('max_running', NULL, 10000, 'no limit')$$, 'check_limit(''max_running'', NULL, 10000, ''no limit'') passes');

-- check_choice
SELECT lives_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'run', 'cancel', 'run')$$, 'check_choice(''on_dependency_failure'', ''run'', ''cancel'', ''run'') passes');
SELECT throws_ok($$SELECT taskboard.check_choice('on_dependency_failure', 'x', 'cancel', 'run')$$, '22023', 'on_dependency_failure must be cancel or run, got ''x''',
    'check_choice(''on_dependency_failure'', ''x'', ''cancel'', ''run'') is refused');
SELECT throws_ok($$SELECT taskboard.check_choice('mode', NULL, 'a', 'b', 'c')$$, '22023', 'mode must be a, b or c, got NULL',
    'check_choice(''mode'', NULL, ''a'', ''b'', ''c'') is refused');

-- check_trace_context
SELECT lives_ok($$SELECT taskboard.check_trace_context('{"traceparent": "x"}')$$, 'check_trace_context(''{"traceparent": "x"}'') passes');
SELECT throws_ok($$SELECT taskboard.check_trace_context('[1]')$$, '22023', 'trace_context must be a JSON object of strings, got [1]',
    'check_trace_context(''[1]'') is refused');
SELECT throws_ok($$SELECT taskboard.check_trace_context('{"a": 1}')$$, '22023', 'trace_context must be a JSON object of strings, got {"a": 1}',
    'check_trace_context(''{"a": 1}'') is refused');
SELECT throws_ok($$SELECT taskboard.check_trace_context(jsonb_build_object('a', repeat('x', 9000)))$$, '22023', 'trace_context must be at most 8192 bytes as text, got 9009',
    'check_trace_context(jsonb_build_object(''a'', repeat(''x'', 9000))) is refused');

-- check_delay
SELECT lives_ok($$SELECT taskboard.check_delay('delay', '1 hour', '1 year')$$, 'check_delay(''delay'', ''1 hour'', ''1 year'') passes');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '-1 second', '1 year')$$, '22023', 'delay must not be NULL or negative, got -00:00:01',
    'check_delay(''delay'', ''-1 second'', ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', NULL, '1 year')$$, '22023', 'delay must not be NULL or negative, got <NULL>',
    'check_delay(''delay'', NULL, ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('delay', '2 years', '1 year')$$, '22023', 'delay must be at most 1 year, got 2 years',
    'check_delay(''delay'', ''2 years'', ''1 year'') is refused');
SELECT throws_ok($$SELECT taskboard.check_delay('older_than', '2 years', '1 year', true)$$, '22023', 'older_than must be at most 1 year, got 2 years',
    'check_delay(''older_than'', ''2 years'', ''1 year'', true) is refused');

-- check_recent
SELECT lives_ok($$SELECT taskboard.check_recent('1 hour')$$, 'check_recent(''1 hour'') passes');
SELECT throws_ok($$SELECT taskboard.check_recent('0')$$, '22023', 'recent must be positive and at most 31 days, got 00:00:00',
    'check_recent(''0'') is refused');
SELECT throws_ok($$SELECT taskboard.check_recent('32 days')$$, '22023', 'recent must be positive and at most 31 days, got 32 days',
    'check_recent(''32 days'') is refused');
SELECT throws_ok($$SELECT taskboard.check_recent(NULL)$$, '22023', 'recent must be positive and at most 31 days, got NULL',
    'check_recent(NULL) is refused');

-- check_lease
SELECT lives_ok($$SELECT taskboard.check_lease(1, gen_random_uuid())$$, 'check_lease(1, gen_random_uuid()) passes');
SELECT throws_ok($$SELECT taskboard.check_lease(NULL, gen_random_uuid())$$, '22023', 'job_id must not be NULL',
    'check_lease(NULL, gen_random_uuid()) is refused');
SELECT throws_ok($$SELECT taskboard.check_lease(1, NULL)$$, '22023', 'token must not be NULL',
    'check_lease(1, NULL) is refused');

-- check_leases
SELECT lives_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()])$$, 'check_leases(''job_ids and tokens'', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()]) passes');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1,2]::bigint[], ARRAY[gen_random_uuid()])$$, '22023', 'job_ids has 2 elements but tokens has 1',
    'check_leases(''job_ids and tokens'', ARRAY[1,2]::bigint[], ARRAY[gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', NULL, ARRAY[gen_random_uuid()])$$, '22023', 'job_ids must not be NULL',
    'check_leases(''job_ids and tokens'', NULL, ARRAY[gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids and tokens', ARRAY[1,NULL]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()])$$, '22023', 'job_ids must not contain NULL',
    'check_leases(''job_ids and tokens'', ARRAY[1,NULL]::bigint[], ARRAY[gen_random_uuid(), gen_random_uuid()]) is refused');
SELECT throws_ok($$SELECT taskboard.check_leases('job_ids, tokens and results', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()], 2)$$, '22023', 'job_ids, tokens and results must be one-dimensional arrays',
    'check_leases(''job_ids, tokens and results'', ARRAY[1]::bigint[], ARRAY[gen_random_uuid()], 2) is refused');

RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
