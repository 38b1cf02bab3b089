-- Verify taskboard:rate_limit on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT rate_starts, rate_per, rate_by_key FROM taskboard.queues WHERE false;
SELECT queue, concurrency_key, started_at FROM taskboard.queue_starts WHERE false;

DO $verify$
BEGIN
    IF pg_catalog.to_regclass('taskboard.queue_starts_by_time') IS NULL
       OR pg_catalog.to_regclass('taskboard.queue_starts_by_key') IS NULL THEN
        RAISE EXCEPTION 'an index of taskboard.queue_starts is missing';
    END IF;
END
$verify$;

ROLLBACK;
