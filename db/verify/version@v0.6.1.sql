-- Verify taskboard:version on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := 'taskboard.version()';
BEGIN
    IF taskboard.version() <> '0.6.1' THEN
        RAISE EXCEPTION 'taskboard.version() must answer 0.6.1, not %', taskboard.version();
    END IF;
    IF NOT (SELECT p.prosecdef
                   AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp']
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p
             WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be SECURITY DEFINER, owned by %_owner, with a fixed search_path', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

ROLLBACK;
