-- last_failure_at(errors): the time of a job's last failed attempt, the
-- latest `at` among its error entries, what jobs_unfinished_last_failure
-- indexes.

BEGIN;
SELECT plan(3);

SELECT is(taskboard.last_failure_at('[]'::jsonb), NULL::timestamptz,
    'no entry: no last failure');
SELECT is(
    taskboard.last_failure_at(pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('at', '2026-01-02T03:00:00+00:00'),
        pg_catalog.jsonb_build_object('at', '2026-01-02T05:00:00+02:00'),
        pg_catalog.jsonb_build_object('error', 'an entry without a time'))),
    '2026-01-02T03:00:00+00:00'::timestamptz,
    'the latest `at` among the entries, offsets taken into account, entries without one ignored'
);
SET LOCAL TimeZone TO 'America/Los_Angeles';
SELECT is(
    taskboard.last_failure_at(pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('at', '2026-01-02T03:00:00+00:00'))),
    '2026-01-02T03:00:00+00:00'::timestamptz,
    'the session''s time zone does not change it'
);
RESET TimeZone;

SELECT * FROM finish();
ROLLBACK;
