-- check_trace_context: one of the argument checks the functions share. It returns (void)
-- for what it accepts and raises 22023 with the message the public functions'
-- tests assert for what it refuses. Internal: the application roles cannot
-- call it, the owner's functions do.

BEGIN;
SELECT plan(5);

SET LOCAL ROLE taskboard_admin;
SELECT throws_ok($$SELECT taskboard.check_trace_context('{"traceparent": "x"}')$$, '42501', NULL, 'an admin cannot call check_trace_context');
RESET ROLE;

SET LOCAL ROLE taskboard_owner;
SELECT lives_ok($$SELECT taskboard.check_trace_context('{"traceparent": "x"}')$$, 'check_trace_context(''{"traceparent": "x"}'') passes');
SELECT throws_ok($$SELECT taskboard.check_trace_context('[1]')$$, '22023', 'trace_context must be a JSON object of strings, got [1]',
    'check_trace_context(''[1]'') is refused');
SELECT throws_ok($$SELECT taskboard.check_trace_context('{"a": 1}')$$, '22023', 'trace_context must be a JSON object of strings, got {"a": 1}',
    'check_trace_context(''{"a": 1}'') is refused');
SELECT throws_ok($$SELECT taskboard.check_trace_context(jsonb_build_object('a', repeat('x', 9000)))$$, '22023', 'trace_context must be at most 8192 bytes as text, got 9009',
    'check_trace_context(jsonb_build_object(''a'', repeat(''x'', 9000))) is refused');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
