-- Verify taskboard:fence on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT fence FROM taskboard.jobs WHERE false;

DO $verify$
BEGIN
    IF NOT EXISTS (
        SELECT
          FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid = 'taskboard.claimed'::pg_catalog.regclass
           AND a.attname = 'fence'
           AND a.atttypid = 'bigint'::pg_catalog.regtype
           AND NOT a.attisdropped) THEN
        RAISE EXCEPTION 'taskboard.claimed must have fence bigint';
    END IF;
END
$verify$;

ROLLBACK;
