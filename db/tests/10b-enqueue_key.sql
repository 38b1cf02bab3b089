-- enqueue(..., concurrency_key): the key is stored with the job; NULL is no
-- key; an empty key or one over 200 characters is refused with 22023 and
-- nothing is written.

BEGIN;
SELECT plan(5);

SET LOCAL ROLE taskboard_producer;
SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => 'customer-42') AS k1 \gset
SELECT taskboard.enqueue('t', '{}', 'ek') AS k2 \gset
SELECT throws_ok($$SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => '')$$, '22023',
    'concurrency_key must not be NULL or empty', 'an empty key is refused');
SELECT throws_ok($$SELECT taskboard.enqueue('t', '{}', 'ek', concurrency_key => repeat('k', 201))$$, '22023',
    'concurrency_key must be at most 200 characters, got 201', 'a key over 200 characters is refused');
RESET ROLE;
SELECT is((SELECT concurrency_key FROM taskboard.jobs WHERE id = :k1), 'customer-42', 'the key is stored with the job');
SELECT is((SELECT concurrency_key FROM taskboard.jobs WHERE id = :k2), NULL, 'no key: NULL');
SELECT is((SELECT pg_catalog.count(*) FROM taskboard.jobs WHERE queue = 'ek'), 2::bigint,
    'refused calls wrote nothing');

SELECT * FROM finish();
ROLLBACK;
