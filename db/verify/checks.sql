-- Verify taskboard:checks on pg

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure;
    v_kind text;
BEGIN
    FOREACH v_fn IN ARRAY ARRAY['taskboard.check_name(text,text)',
                                'taskboard.check_interval(text,interval,interval)',
                                'taskboard.check_time(text,timestamptz)']::pg_catalog.regprocedure[] LOOP
        IF NOT (SELECT NOT p.prosecdef
                       AND p.proconfig IS NULL
                       AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
                  FROM pg_catalog.pg_proc AS p
                 WHERE p.oid = v_fn) THEN
            RAISE EXCEPTION '% must be owned by %_owner, not SECURITY DEFINER, with no setting', v_fn, v_prefix;
        END IF;
        IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
            RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
        END IF;
        FOREACH v_kind IN ARRAY ARRAY['producer', 'worker', 'admin'] LOOP
            IF pg_catalog.has_function_privilege(v_prefix || '_' || v_kind, v_fn, 'EXECUTE') THEN
                RAISE EXCEPTION '% must not be executable by %_%', v_fn, v_prefix, v_kind;
            END IF;
        END LOOP;
    END LOOP;
END
$verify$;

ROLLBACK;
