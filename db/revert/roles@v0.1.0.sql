-- Revert taskboard:roles from pg
--
-- Roles are shared by every database of the server. A role is dropped only
-- when nothing anywhere depends on it any more: no object or privilege in
-- another database, on a shared object, or left in this one. A role still in
-- use elsewhere is kept, with a NOTICE, so that reverting one database never
-- fails and never breaks another.

BEGIN;

DO $roles$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY[
        'taskboard_admin',
        'taskboard_worker',
        'taskboard_producer',
        'taskboard_owner'
    ] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = v_role);
        IF EXISTS (
            SELECT
              FROM pg_catalog.pg_shdepend AS d
              JOIN pg_catalog.pg_roles AS r ON r.oid = d.refobjid
             WHERE d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass
               AND r.rolname = v_role
        ) THEN
            RAISE NOTICE 'role % is still used by another database or object; keeping it', v_role;
        ELSE
            EXECUTE pg_catalog.format('DROP ROLE %I', v_role);
        END IF;
    END LOOP;
END
$roles$;

COMMIT;
