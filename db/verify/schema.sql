-- Verify taskboard:schema on pg

BEGIN;

DO $verify$
BEGIN
    IF (SELECT nspowner::pg_catalog.regrole::text
          FROM pg_catalog.pg_namespace
         WHERE nspname = 'taskboard') IS DISTINCT FROM 'taskboard_owner' THEN
        RAISE EXCEPTION 'schema taskboard must exist and be owned by taskboard_owner';
    END IF;
    IF pg_catalog.has_schema_privilege('public', 'taskboard', 'CREATE') THEN
        RAISE EXCEPTION 'PUBLIC must not create objects in schema taskboard';
    END IF;
END
$verify$;

ROLLBACK;
