-- Verify taskboard:roles on pg

BEGIN;

DO $verify$
BEGIN
    IF (SELECT pg_catalog.count(*)
          FROM pg_catalog.pg_roles
         WHERE rolname IN ('taskboard_owner', 'taskboard_producer', 'taskboard_worker', 'taskboard_admin')
           AND NOT rolcanlogin
           AND NOT rolsuper) <> 4 THEN
        RAISE EXCEPTION 'the four taskboard roles must exist, NOLOGIN and not superuser';
    END IF;
END
$verify$;

ROLLBACK;
