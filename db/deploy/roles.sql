-- Deploy taskboard:roles to pg
-- requires: roles@v0.1.0
--
-- The four roles, named from the Sqitch variable `prefix` (default
-- taskboard): PREFIX_owner, PREFIX_producer, PREFIX_worker, PREFIX_admin.
-- One set of roles is one trust domain: a database deployed with its own
-- prefix shares no privilege with the others on the server.
--
-- A missing role is created. An existing one is adopted only when it is what
-- this script would have made: NOLOGIN, not a superuser, no CREATEROLE,
-- CREATEDB, REPLICATION or BYPASSRLS, and a member of no other role. On a
-- fresh install (no taskboard schema in this database yet) it must also be
-- untouched: no members or admins but the deploying role's own ADMIN
-- OPTION, and nothing owned, granted or given default privileges in this
-- database or on a shared object. Once installed, the owner must still have
-- no member that can use its rights. Anything else stops the deploy with
-- one error naming the role and what is wrong: a role someone created first
-- must not become the owner of the queue or hand its rights to strangers.
--
-- The deploying role needs CREATEROLE, not superuser. It never stays a
-- member of the owner: every later step grants itself the owner for its own
-- transaction and revokes it before committing. On PostgreSQL 16+ the roles
-- are created with createrole_self_grant off, so the creator keeps only the
-- ADMIN OPTION PostgreSQL records for it, which confers none of the roles'
-- rights.

BEGIN;

\set VERBOSITY terse
SET LOCAL taskboard.role_prefix TO :'prefix';

DO $roles$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fresh boolean;
    v_kind text;
    v_role text;
    v_found pg_catalog.pg_roles%ROWTYPE;
    v_problems text[];
    v_names text;
    v_schema_owner text;
BEGIN
    IF v_prefix !~ '^[a-z_][a-z0-9_]{0,47}$' OR v_prefix ~ '^pg_' THEN
        RAISE EXCEPTION 'prefix must be 1 to 48 lowercase letters, digits or underscores, not starting with a digit or pg_ (got %)',
            pg_catalog.quote_literal(v_prefix)
            USING ERRCODE = '22023';
    END IF;
    -- A database keeps the prefix it was installed with.
    SELECT n.nspowner::pg_catalog.regrole::text INTO v_schema_owner
      FROM pg_catalog.pg_namespace AS n
     WHERE n.nspname = 'taskboard';
    IF v_schema_owner IS NOT NULL AND v_schema_owner <> pg_catalog.quote_ident(v_prefix || '_owner') THEN
        RAISE EXCEPTION 'schema taskboard is owned by %, not %_owner: deploy with the prefix this database was installed with',
            v_schema_owner, v_prefix
            USING ERRCODE = '22023';
    END IF;

    v_fresh := v_schema_owner IS NULL;

    IF pg_catalog.current_setting('server_version_num')::integer >= 160000 THEN
        PERFORM pg_catalog.set_config('createrole_self_grant', '', true);
    END IF;

    FOREACH v_kind IN ARRAY ARRAY['owner', 'producer', 'worker', 'admin'] LOOP
        v_role := v_prefix || '_' || v_kind;
        SELECT * INTO v_found FROM pg_catalog.pg_roles WHERE rolname = v_role;
        IF NOT FOUND THEN
            EXECUTE pg_catalog.format(
                'CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS',
                v_role);
            CONTINUE;
        END IF;

        v_problems := ARRAY[]::text[];
        IF v_found.rolcanlogin THEN v_problems := v_problems || 'it can log in (LOGIN)'::text; END IF;
        IF v_found.rolsuper THEN v_problems := v_problems || 'it is a superuser'::text; END IF;
        IF v_found.rolcreaterole THEN v_problems := v_problems || 'it has CREATEROLE'::text; END IF;
        IF v_found.rolcreatedb THEN v_problems := v_problems || 'it has CREATEDB'::text; END IF;
        IF v_found.rolreplication THEN v_problems := v_problems || 'it has REPLICATION'::text; END IF;
        IF v_found.rolbypassrls THEN v_problems := v_problems || 'it has BYPASSRLS'::text; END IF;

        -- Grants are read through jsonb so the same text runs on 15, which
        -- has no set_option or inherit_option (there, any grant is both).
        SELECT pg_catalog.string_agg(DISTINCT m.roleid::pg_catalog.regrole::text, ', ')
          INTO v_names
          FROM pg_catalog.pg_auth_members AS m
         WHERE m.member = v_found.oid;
        IF v_names IS NOT NULL THEN
            v_problems := v_problems || ('it is a member of ' || v_names);
        END IF;

        SELECT pg_catalog.string_agg(DISTINCT m.member::pg_catalog.regrole::text, ', ')
          INTO v_names
          FROM pg_catalog.pg_auth_members AS m
         WHERE m.roleid = v_found.oid
           AND CASE WHEN v_fresh
                    -- Fresh: nothing but the deploying role's ADMIN OPTION.
                    THEN m.member <> pg_catalog.to_regrole(CURRENT_USER)
                         OR COALESCE((pg_catalog.to_jsonb(m) ->> 'set_option')::boolean, true)
                         OR COALESCE((pg_catalog.to_jsonb(m) ->> 'inherit_option')::boolean, true)
                    -- Installed: the application roles have their logins as
                    -- members; the owner has none that can use its rights.
                    ELSE v_kind = 'owner'
                         AND (COALESCE((pg_catalog.to_jsonb(m) ->> 'set_option')::boolean, true)
                              OR COALESCE((pg_catalog.to_jsonb(m) ->> 'inherit_option')::boolean, true))
               END;
        IF v_names IS NOT NULL THEN
            v_problems := v_problems || ('it has members or admins this deploy did not grant: ' || v_names);
        END IF;

        IF v_fresh AND EXISTS (
            SELECT
              FROM pg_catalog.pg_shdepend AS d
             WHERE d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass
               AND d.refobjid = v_found.oid
               AND d.dbid IN (0, (SELECT oid FROM pg_catalog.pg_database
                                   WHERE datname = pg_catalog.current_database()))
        ) THEN
            v_problems := v_problems
                || 'it already owns, is granted or gives default privileges on objects in this database or the server'::text;
        END IF;

        IF pg_catalog.cardinality(v_problems) > 0 THEN
            RAISE EXCEPTION 'role % already exists and is not adopted: %',
                pg_catalog.quote_ident(v_role), pg_catalog.array_to_string(v_problems, '; ')
                USING ERRCODE = '55000',
                      HINT = 'drop or fix the role, or deploy with another prefix (sqitch deploy --set prefix=NAME)';
        END IF;
    END LOOP;
END
$roles$;

COMMIT;
