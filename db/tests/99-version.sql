-- version(): the schema's release, for the driver's start-up check. Every
-- application role may ask; the answer is a plain release number.

BEGIN;
SELECT plan(5);

SELECT function_returns('taskboard', 'version', ARRAY[]::name[], 'text',
    'version() takes no argument and returns text');

SET LOCAL ROLE taskboard_producer;
SELECT is(taskboard.version(), '0.7.3',
    'a producer reads the release this schema deploys, 0.7.3');
SELECT matches(taskboard.version(), '^[0-9]+\.[0-9]+\.[0-9]+$',
    'the release is MAJOR.MINOR.PATCH with no prefix, as the driver compares it');
RESET ROLE;

SET LOCAL ROLE taskboard_worker;
SELECT is(taskboard.version(), '0.7.3', 'a worker reads the same release');
RESET ROLE;

SET LOCAL ROLE taskboard_admin;
SELECT is(taskboard.version(), '0.7.3', 'an admin reads the same release');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
