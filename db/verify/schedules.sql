-- Verify taskboard:schedules on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

SELECT schedule, last_slot, last_job_id
  FROM taskboard.schedules
 WHERE false;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_acl    pg_catalog.aclitem[];
BEGIN
    IF NOT EXISTS (
        SELECT
          FROM pg_catalog.pg_class AS c
         WHERE c.oid = pg_catalog.to_regclass('taskboard.schedule_slots')
           AND c.relowner = pg_catalog.to_regrole(v_prefix || '_owner')
    ) THEN
        RAISE EXCEPTION 'taskboard.schedule_slots must exist, owned by %_owner', v_prefix;
    END IF;
    SELECT c.relacl INTO v_acl
      FROM pg_catalog.pg_class AS c
     WHERE c.oid = 'taskboard.schedule_slots'::pg_catalog.regclass;
    IF v_acl IS NOT NULL
       AND EXISTS (
           SELECT
             FROM pg_catalog.aclexplode(v_acl) AS a
            WHERE a.grantee <> pg_catalog.to_regrole(v_prefix || '_owner')
       ) THEN
        RAISE EXCEPTION 'taskboard.schedule_slots must be granted to nobody: enqueue_periodic writes it, the view reads it';
    END IF;
    IF NOT EXISTS (
        SELECT
          FROM pg_catalog.pg_class AS c
         WHERE c.oid = pg_catalog.to_regclass('taskboard.schedules')
           AND c.relowner = pg_catalog.to_regrole(v_prefix || '_owner')
    ) THEN
        RAISE EXCEPTION 'taskboard.schedules must exist, owned by %_owner', v_prefix;
    END IF;
    IF NOT (pg_catalog.has_table_privilege(v_prefix || '_producer', 'taskboard.schedules', 'SELECT')
            AND pg_catalog.has_table_privilege(v_prefix || '_worker', 'taskboard.schedules', 'SELECT')
            AND pg_catalog.has_table_privilege(v_prefix || '_admin', 'taskboard.schedules', 'SELECT')) THEN
        RAISE EXCEPTION '%_producer, %_worker and %_admin must be able to read taskboard.schedules',
            v_prefix, v_prefix, v_prefix;
    END IF;
END
$verify$;

ROLLBACK;
