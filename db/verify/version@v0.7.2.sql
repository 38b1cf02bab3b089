-- Verify taskboard:version on pg
--
-- Release 0.7.2: written by `make schema` (never by hand).

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.bury_spent(text,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.bury_spent(text,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '6616d7b76279e57db5b0101a98ecc96d' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'bb07d99563b180f3589d7635e156175d' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.cancel(bigint)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.cancel(bigint) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'ca79a5b71d7f1623379f22d1f3318826' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '50a4e302474d764d98040ea671a32008' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_arg(boolean,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_arg(boolean,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'd29aa504a368b83241ca496a8c2e333c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '84fb336a920893bd1ff01f72a7d94053' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_between(text,bigint,bigint,bigint)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_between(text,bigint,bigint,bigint) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '08a39d276733677930d48aac68a89553' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'a41c1e08ea91de9c9ef9939b158d2a75' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_choice(text,text,text[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_choice(text,text,text[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'dafd18d9f88bc30e6c87d4b3000db76c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '7f6010a0c6cf715ac6fbcf1801008771' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_delay(text,interval,text,boolean)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_delay(text,interval,text,boolean) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'dfa0b8f9187e072449799149c60dad8f' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '500227dfd3a4796c8c4e795052fbfd7a' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_flat(text,integer[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_flat(text,integer[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '49af0720026e58efcd130f1b4e5814fd' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'ca8bde2c165d638509dc6e3034b471e9' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_given(text,anyelement,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_given(text,anyelement,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'b2530272663d1df78b190ece75933671' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '0986724c98de02612d06978a62c5181e' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_interval(text,interval,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_interval(text,interval,interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '5cdbbf9a278d10bc8ea80a95b5a441ef' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'b6cb159956a93f590279c53da53ab836' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_items(text,anyarray)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_items(text,anyarray) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '12e6841293476bbde0654a127857a0a4' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '897388dd186d4bf266c6f3f644351ea0' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_key(text,text,integer,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_key(text,text,integer,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '758c3cc66460c838a31d45020b2a1398' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'df207dc535fdac07f94738d0efcd8b53' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_lease(bigint,uuid)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_lease(bigint,uuid) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '62fe48193e439e0f49ed1476b14edb25' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'f7a2f1d54784271c46aa315d2a56030c' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_leases(text,bigint[],uuid[],integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_leases(text,bigint[],uuid[],integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'ddd7af0495f2a44d4a454096083abc36' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'bec23aedf2529d0ea8109a4a9a401dfa' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_lengths(text,integer,text,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_lengths(text,integer,text,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '3765a39c4d4491907c3e6ae425227124' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '053a94963fcad8ba57efca2384634b26' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_limit(text,integer,integer,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_limit(text,integer,integer,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'cf3dbec1cf8b8e7fe9e11718cc275fdb' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '77e4e888dbd64b075659d0f279591612' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_name(text,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_name(text,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '885e2aee32ceec233e89c584ca5295c4' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '0bff08838ec6bc20ca50978fd7dbce7a' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_recent(interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_recent(interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '69285e72fc0e36a57b5e7bebae08a3ed' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '470ae695cf60b18c5f610e0c5c17e2b7' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_time(text,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_time(text,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'e19065aad23a6fe2c4dc18a070f7e989' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'b5e65cb40cd0c30bc62155dc69c952e2' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.check_trace_context(jsonb)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.check_trace_context(jsonb) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '2d5650fb4a3005a02c8923ebf472cc38' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '8a5e143fad341e2fb69391fac64fe0e4' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.claim(text,text,integer,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.claim(text,text,integer,interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'e77097578e36d874296aa5ed856a95e7' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '24011d23b01da6d0bf0d3c7d556b2483' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.complete(bigint,uuid,jsonb)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.complete(bigint,uuid,jsonb) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'c1b387e4a97af1f7d84acd7d5684db33' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '0a4ea907eefec94d9da2e31137907243' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.complete_held(bigint[],uuid[],jsonb[],timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '163f95126471ca9c34369a2c7120164a' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'ce2af25187723cc77b1a02e4a58ddba6' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.complete_many(bigint[],uuid[],jsonb[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.complete_many(bigint[],uuid[],jsonb[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'b4bf7e0693ac0affd6d4f70c92a6a9d3' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '0477b9848524cf97542e729ce13b557e' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.discard_held(bigint[],uuid[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.discard_held(bigint[],uuid[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '24edb2208a444aac3e8097ebf61b54d3' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'd77df01c5ebec1aaefa195f999cbce5f' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'bece7778404c3501cab8f09cca2d693c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '24134f9fd2cb252b58bbbf549c1e8b8c' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb,text[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '256c81537d86c8b8ebc7254f7af06997' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '31312c3cad5cf8c01f3c84dbb252b74e' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer,text[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '474594f583d7c35cdee5c283dcd95275' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'b16cb3cfe9e7a092de03896c886c5eb2' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.enqueue_waiting(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.enqueue_waiting(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb,text,bigint[],text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'cf21dad543089530e31a303a227cb995' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '24b13c9f30abb23d74fbbb681dafab99' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.fail(bigint,uuid,text,interval,boolean,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.fail(bigint,uuid,text,interval,boolean,text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '8431d2d8b47291f52809b563bf1aae29' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'fa0bf1939e1ee7d8aea3c0485ae3f9e3' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.find_ids(text,text,text,bigint,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.find_ids(text,text,text,bigint,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '056d7345ffc565018cef6188af50b41b' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '1d3c0333c984f573de2efb84ba5a1c72' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.find_jobs(text,text,text,bigint,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.find_jobs(text,text,text,bigint,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'faba1200971dc9457da1f171b0373b93' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'c589ab08474cbcc45cc7cac20b7afc6c' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.find_jobs_summary(text,text,text,bigint,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.find_jobs_summary(text,text,text,bigint,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'fa9e95d4cef3d18601d9b6d48fffb559' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'dda5baa2fea9682e213871b91a843d84' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.full_keys(text,integer,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.full_keys(text,integer,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '5a6a57bdad1221ea0106241e21d6e7d7' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '249ecd29876619497a41a14a89886dcf' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.get_job(bigint)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.get_job(bigint) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '6ae8960467e39c8447628a60c125a823' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '9c24120104c81e25117bd5eb7ded33e4' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.grant_leases(bigint[],integer,text,interval,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.grant_leases(bigint[],integer,text,interval,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '9f6bf299e1236170e717dc8f8cc25fc7' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'ac8d95acca627b23d883cd13dfa61b49' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.job_activity(interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.job_activity(interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '019f723a2948adebf0c9d93b90e8540c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '943f922c61390ef92995fbd230d33464' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.job_history(bigint)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.job_history(bigint) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'cc3c91c32d87d3c84f67bcb1e73f428a' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '6c5f85665291d23c12275b52533ca85a' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.last_failure_at(jsonb)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.last_failure_at(jsonb) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '58854ab2d6b1e74d880a529a53c61e13' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '45b321fef2fdc5ec78fa7bfcf30438e9' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.lease_state(bigint,uuid)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.lease_state(bigint,uuid) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'f1ecb0413281e3ed38b12f147605e45e' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'c9b317f5ac431a5e995a8f4d0f566eef' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.notify_runnable(text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.notify_runnable(text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '85a763e07cb4e62caae2b28b12bc6e8e' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'bc6efff17dc8cb57e5c76854cfaf3916' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.pause(text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.pause(text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '8b1d4f364e30f3f634cfc24c43455119' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '1a1266dd5d422302d058b219f257d731' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.pick_expired(text,timestamp with time zone,integer,text[],integer,interval,boolean)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.pick_expired(text,timestamp with time zone,integer,text[],integer,interval,boolean) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '12872c24e46dc0ac1ad42a84472b09a1' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'c2a57063a3ee461f482c7ba63442eec0' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.pick_keyed(text,timestamp with time zone,integer,text[],integer,integer,interval,boolean,bigint[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.pick_keyed(text,timestamp with time zone,integer,text[],integer,integer,interval,boolean,bigint[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'd1e0ba569989ad38ce3a7db307c853ea' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '57ee2c73a5227664caec2352ad5741e6' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.pick_next(text,timestamp with time zone,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.pick_next(text,timestamp with time zone,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '522cbaa9206daf70c7f2068617cfe49a' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'cd8477c4090d5cd212910b0dc5aa9e3a' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.pick_queued(text,timestamp with time zone,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.pick_queued(text,timestamp with time zone,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'c83eed3eb5beaf3f56e39ba13b95da4c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '2cb596444a73be3f0196cdab76f5a7fd' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.prune(interval,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.prune(interval,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'f6ad9459be3e909a3dd6f022a2840ebb' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '88c6629f846001bdbc7ffadaf67ce902' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.queue_overview(interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.queue_overview(interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'c56452f8d9e659f98cf8d226014ae4a5' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '9dda7201868570cd7e2f2bd1c71687c4' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.queue_room(text,integer,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.queue_room(text,integer,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'a9d40ab617f6b1091e3d13d33794eb00' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '79b2be8441900854a5485e8128529722' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.rate_full_keys(text,timestamp with time zone,integer,text[],text[],integer,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.rate_full_keys(text,timestamp with time zone,integer,text[],text[],integer,interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '6d45a2f2fadba2f600c5d4e03ac7991c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '7e1ccd90643aa9f7918a393f8faed062' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.recheck_dependencies(integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.recheck_dependencies(integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '224ef1414279ddafd024d4f4e0c38865' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '997c56cbb1bf7985137468bb8281f993' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.record_refusals(text,bigint[],uuid[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.record_refusals(text,bigint[],uuid[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '3dd69f2d5f32a6fd39e21aff6494dfce' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'd0452769d4abfe30a741141580b857dc' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.release(bigint,uuid,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.release(bigint,uuid,interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '0023f41d5c6d5ed347d2df652f5359c1' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '24cc11ee34cce7db4bf87f39ab31f72c' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.remove_schedule(text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.remove_schedule(text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'a928611a37923a405dd7eba6753b4fd2' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'ec5e2f4d276995fa03703059f8225d0d' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.renew(bigint,uuid,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.renew(bigint,uuid,interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '0122bdd218d6d0022971ef8f4d7c5ec2' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '399013a054818143c46f30f98ea08769' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.renew_many(bigint[],uuid[],interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.renew_many(bigint[],uuid[],interval) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'a920ddd413972523324d745d5cf2aabc' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'b21ac8b06db7cb6767ebe543ad8a7f19' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.resume(text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.resume(text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '4ae0a2302d12898c40d9a8cd4e2f685c' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '1aa23a61a9e58cd7237d64d1958d86a6' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.retry(bigint)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.retry(bigint) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '4af9821fe06f77a8210e845695a679cd' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '1a6121448d1f2d2996ef98836eaf6d3c' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.revert_losses(text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.revert_losses(text) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM 'b288a3254e78685999f6c5e096d36adb' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '24496f04ebcf2eaa6528d39e7a1de822' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.set_key_limit(text,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.set_key_limit(text,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '6c90d48a448d2bd44a9d9c5948f43cbc' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.set_limit(text,text,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.set_limit(text,text,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '6019634211be925674cfc57bb051e7ba' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '3f9b16a6fd43703745411be42f461783' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.set_queue_discard(text,boolean)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.set_queue_discard(text,boolean) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '38b72dea7df6fd29d91e8f297cd1b77d' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '1922c2fe640d747227d5c46a3d3fac21' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.set_queue_limit(text,integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.set_queue_limit(text,integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'c3569ec6609786355c5ceedc3530b68e' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.set_rate_limit(text,integer,interval,boolean)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.set_rate_limit(text,integer,interval,boolean) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '17b407c994f72d21fd8feba57f70147a' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '6719a116de522bbc518c3f93065c8727' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.settle_dependents(bigint[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.settle_dependents(bigint[]) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '35c18de6743d8498d9f757b7c3990384' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '280ad196a7ce56ed2dc8cf6980821b07' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.version()');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.version() is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '94b4600e43300d9a3fd8cffae35c1289' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM 'ae73abdacca1f84e8524581b3ee6d059' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
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

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.window_room(text,integer,interval,timestamp with time zone)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.window_room(text,integer,interval,timestamp with time zone) is missing';
    END IF;
    IF (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '9ec563169304051f65a15cdd957acdfd' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '058a7473253a5c69f9426cd3c5ce69c2' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.worker_leases(integer)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.worker_leases(integer) is missing';
    END IF;
    IF (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '20d4e88e46c2a2222114bc30909fc138' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '6871b6ef58ae25371cb510f65d81fce1' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_producer', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_producer', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege(v_prefix || '_worker', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by %_worker', v_fn, v_prefix;
    END IF;
    IF NOT pg_catalog.has_function_privilege(v_prefix || '_admin', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must be executable by %_admin', v_fn, v_prefix;
    END IF;
END
$verify$;

ROLLBACK;
