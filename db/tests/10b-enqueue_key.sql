-- enqueue(..., concurrency_key) and enqueue_many(..., concurrency_keys): the
-- key is stored with the job; NULL is no key; an empty key or one over 200
-- characters, or keys of another length than the payloads, are refused with
-- 22023 and nothing is written.

BEGIN;
SELECT plan(10);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => 'customer-42') AS k1 \gset
SELECT taskboard.enqueue('t', '{}', 'ek') AS k2 \gset
SELECT throws_ok($$SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => '')$$, '22023',
    'concurrency_key must not be empty (NULL means no key)', 'an empty key is refused');
SELECT throws_ok($$SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => repeat('k', 201))$$, '22023',
    'concurrency_key must be at most 200 characters, got 201', 'a key over 200 characters is refused');
SELECT results_eq($$SELECT count(*) FROM taskboard.enqueue_many('t', ARRAY['{}', '{}', '{}']::jsonb[], 'ekm',
                      concurrency_keys => ARRAY['a', NULL, 'b'])$$, $$VALUES (3::bigint)$$,
    'enqueue_many takes a key per payload');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many('t', ARRAY['{}', '{}']::jsonb[], 'ekm', concurrency_keys => ARRAY['a'])$$,
    '22023', 'concurrency_keys has 1 elements but payloads has 2', 'keys of another length are refused');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many('t', ARRAY['{}']::jsonb[], 'ekm', concurrency_keys => ARRAY[''])$$,
    '22023', 'concurrency_keys must hold keys of 1 to 200 characters (NULL means no key)', 'an empty key is refused');
SELECT throws_ok($$SELECT * FROM taskboard.enqueue_many('t', ARRAY['{}']::jsonb[], 'ekm', concurrency_keys => ARRAY[['a']])$$,
    '22023', 'concurrency_keys must be a one-dimensional array', 'a two-dimensional array is refused');
RESET ROLE;
SELECT results_eq($$SELECT concurrency_key FROM taskboard.jobs WHERE queue = 'ekm' ORDER BY id$$,
    $$VALUES ('a'::text), (NULL), ('b')$$, 'each job has its payload''s key, and only the first call wrote');
SELECT is((SELECT concurrency_key FROM taskboard.jobs WHERE id = :k1), 'customer-42', 'the key is stored with the job');
SELECT is((SELECT concurrency_key FROM taskboard.jobs WHERE id = :k2), NULL, 'no key: NULL');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'ek'), 2::bigint,
    'refused calls wrote nothing');

SELECT * FROM finish();
ROLLBACK;
