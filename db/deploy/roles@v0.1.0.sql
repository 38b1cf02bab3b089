-- Deploy taskboard:roles to pg
--
-- The four cluster-wide roles. Roles outlive databases, so each one is
-- created only when it is missing: a second database on the same server
-- deploys against the roles the first one created.
--
--   taskboard_owner     owns the schema, tables and functions. NOLOGIN and
--                       not a superuser, so SECURITY DEFINER code runs with
--                       no more than the queue's own rights.
--   taskboard_producer  enqueues and reads jobs.
--   taskboard_worker    producer + claims and settles jobs.
--   taskboard_admin     worker + cancel, retry, prune.
--
-- The application roles are granted EXECUTE on their functions one by one,
-- not by role membership, so each role's rights read in one place: the
-- grants at the end of every function's file.

BEGIN;

DO $roles$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY[
        'taskboard_owner',
        'taskboard_producer',
        'taskboard_worker',
        'taskboard_admin'
    ] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE', v_role);
        END IF;
    END LOOP;
END
$roles$;

COMMIT;
