-- Verify taskboard:started_at on pg

BEGIN;

\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT started_at FROM taskboard.jobs WHERE false;

DO $verify$
BEGIN
    IF (SELECT a.attname
          FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid = 'taskboard.job_info'::pg_catalog.regclass
           AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY a.attnum DESC
         LIMIT 1) IS DISTINCT FROM 'started_at' THEN
        RAISE EXCEPTION 'taskboard.job_info must end with started_at';
    END IF;
END
$verify$;

ROLLBACK;
