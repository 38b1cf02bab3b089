-- Verify taskboard:roles on pg
--
-- The four roles of the prefix exist with no way to log in, no cluster-wide
-- power and no membership in other roles, and no role can use the owner's
-- rights: none is a member of it with SET or INHERIT (on 15, with any
-- membership), directly or, for a LOGIN role, through other roles. Holders
-- of its ADMIN OPTION (the deploying role) may grant it, so they belong to
-- the trust domain; they are not members.

BEGIN;

\set VERBOSITY terse
SET LOCAL taskboard.role_prefix TO :'prefix';

DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_owner pg_catalog.regrole := pg_catalog.to_regrole(v_prefix || '_owner');
    v_logins text;
BEGIN
    IF (SELECT pg_catalog.count(*)
          FROM pg_catalog.pg_roles
         WHERE rolname IN (v_prefix || '_owner', v_prefix || '_producer',
                           v_prefix || '_worker', v_prefix || '_admin')
           AND NOT (rolcanlogin OR rolsuper OR rolcreaterole OR rolcreatedb
                    OR rolreplication OR rolbypassrls)) <> 4 THEN
        RAISE EXCEPTION 'the four % roles must exist, NOLOGIN, with no SUPERUSER, CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS',
            v_prefix;
    END IF;

    WITH RECURSIVE reaches_owner (oid) AS (
        SELECT v_owner::pg_catalog.oid
        UNION
        SELECT m.member
          FROM pg_catalog.pg_auth_members AS m
          JOIN reaches_owner AS r ON r.oid = m.roleid
         WHERE COALESCE((pg_catalog.to_jsonb(m) ->> 'set_option')::boolean, true)
            OR COALESCE((pg_catalog.to_jsonb(m) ->> 'inherit_option')::boolean, true)
    )
    SELECT pg_catalog.string_agg(a.rolname, ', ' ORDER BY a.rolname)
      INTO v_logins
      FROM reaches_owner AS r
      JOIN pg_catalog.pg_roles AS a ON a.oid = r.oid
     WHERE a.rolcanlogin AND NOT a.rolsuper;
    IF v_logins IS NOT NULL THEN
        RAISE EXCEPTION 'LOGIN roles can use the rights of %: %; revoke their membership', v_owner, v_logins;
    END IF;

    -- Nor any role at all, directly: one could be given LOGIN later.
    SELECT pg_catalog.string_agg(m.member::pg_catalog.regrole::text, ', ')
      INTO v_logins
      FROM pg_catalog.pg_auth_members AS m
     WHERE m.roleid = v_owner
       AND (COALESCE((pg_catalog.to_jsonb(m) ->> 'set_option')::boolean, true)
            OR COALESCE((pg_catalog.to_jsonb(m) ->> 'inherit_option')::boolean, true));
    IF v_logins IS NOT NULL THEN
        RAISE EXCEPTION 'roles can use the rights of %: %; revoke their membership', v_owner, v_logins;
    END IF;

    -- And the four are members of nothing: their rights are their own.
    SELECT pg_catalog.string_agg(m.member::pg_catalog.regrole::text || ' in ' || m.roleid::pg_catalog.regrole::text, ', ')
      INTO v_logins
      FROM pg_catalog.pg_auth_members AS m
      JOIN pg_catalog.pg_roles AS r ON r.oid = m.member
     WHERE r.rolname IN (v_prefix || '_owner', v_prefix || '_producer',
                         v_prefix || '_worker', v_prefix || '_admin');
    IF v_logins IS NOT NULL THEN
        RAISE EXCEPTION 'the % roles must be members of no role: %', v_prefix, v_logins;
    END IF;
END
$verify$;

ROLLBACK;
