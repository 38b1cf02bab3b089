-- Verify taskboard:job_events on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
BEGIN
    IF NOT EXISTS (
        SELECT
          FROM pg_catalog.pg_class AS c
         WHERE c.oid = pg_catalog.to_regclass('taskboard.job_events')
           AND c.relowner = pg_catalog.to_regrole(v_prefix || '_owner')
    ) THEN
        RAISE EXCEPTION 'taskboard.job_events must exist, owned by %_owner', v_prefix;
    END IF;
    IF (SELECT c.relacl FROM pg_catalog.pg_class AS c WHERE c.oid = 'taskboard.job_events'::pg_catalog.regclass)
       IS NOT NULL
       AND EXISTS (
           SELECT
             FROM pg_catalog.aclexplode((SELECT c.relacl FROM pg_catalog.pg_class AS c
                                          WHERE c.oid = 'taskboard.job_events'::pg_catalog.regclass)) AS a
            WHERE a.grantee <> pg_catalog.to_regrole(v_prefix || '_owner')
       ) THEN
        RAISE EXCEPTION 'taskboard.job_events must be granted to nobody: the functions are the only way in';
    END IF;
END
$verify$;

ROLLBACK;
