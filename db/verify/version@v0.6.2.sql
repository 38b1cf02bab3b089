-- Verify taskboard:version on pg
--
-- Release 0.6.2: written by `make schema` (never by hand).

BEGIN;

SET LOCAL taskboard.role_prefix TO :'prefix';
\set owner_role :prefix _owner
-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.
GRANT :"owner_role" TO CURRENT_USER;

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.complete(bigint,uuid,jsonb)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.complete(bigint,uuid,jsonb) is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> '7dd154ce89afb806d2489613ded4ce45' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> '0a4ea907eefec94d9da2e31137907243' THEN
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
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.complete_many(bigint[],uuid[],jsonb[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.complete_many(bigint[],uuid[],jsonb[]) is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> 'af5e93681dffaae943c771ab6b31662d' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> 'a1288b53f8a57e80a295789313929f12' THEN
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
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.fail(bigint,uuid,text,interval,boolean,text)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.fail(bigint,uuid,text,interval,boolean,text) is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> '2697f2624473e92df52c4bd63a16e0a2' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> 'fa0bf1939e1ee7d8aea3c0485ae3f9e3' THEN
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
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.record_refusals(text,bigint[],uuid[])');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.record_refusals(text,bigint[],uuid[]) is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = false
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> '5dbc5859f4d64ad33dfe0d931b23a1b7' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> '4221b000791a94a137ddafd3b229cdca' THEN
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
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.renew(bigint,uuid,interval)');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.renew(bigint,uuid,interval) is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> '8d9b558311b42364e82f728f645f84ae' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> '399013a054818143c46f30f98ea08769' THEN
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
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> 'f7d5946841eb7b91701b89b829473764' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> 'b21ac8b06db7cb6767ebe543ad8a7f19' THEN
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
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('taskboard.version()');
BEGIN
    IF v_fn IS NULL THEN
        RAISE EXCEPTION 'taskboard.version() is missing';
    END IF;
    IF NOT (SELECT p.prosecdef = true
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;
    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;
    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       <> '8261e3a0826181724c8c0c8470773f02' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;
    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) <> 'ae73abdacca1f84e8524581b3ee6d059' THEN
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

ROLLBACK;
