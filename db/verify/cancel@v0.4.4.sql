-- Verify taskboard:cancel on pg

BEGIN;

DO $verify$
DECLARE
    v_fn pg_catalog.regprocedure := 'taskboard.cancel(bigint)';
BEGIN
    IF NOT (SELECT p.prosecdef
                   AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp']
                   AND p.proowner = 'taskboard_owner'::pg_catalog.regrole
              FROM pg_catalog.pg_proc AS p
             WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be SECURITY DEFINER, owned by taskboard_owner, with a fixed search_path', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF NOT pg_catalog.has_function_privilege('taskboard_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by taskboard_admin', v_fn;
    END IF;
END
$verify$;

ROLLBACK;
