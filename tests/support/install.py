"""Installs under a role prefix of their own (a domain), psql, and the catalog of a deploy."""

from __future__ import annotations

import re
import subprocess
import uuid

import psycopg
from psycopg import sql

from taskboard import install
from taskboard_dev import devdb, server

# Everything a deploy decides that a reviewer would compare: functions with
# their bodies, owners, settings and grants; tables, columns, constraints,
# indexes, types and the schema's own owner and grants.
CATALOG = """
    SELECT 'function', p.oid::regprocedure::text,
           concat_ws(' | ', pg_get_functiondef(p.oid), p.proowner::regrole::text,
                     p.prosecdef::text, array_to_string(p.proconfig, ','), p.proacl::text)
      FROM pg_proc AS p WHERE p.pronamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'relation', c.relname,
           concat_ws(' | ', c.relkind::text, c.relowner::regrole::text, c.relacl::text,
                     array_to_string(c.reloptions, ','))
      FROM pg_class AS c WHERE c.relnamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'column', a.attrelid::regclass::text || '.' || a.attname,
           concat_ws(' | ', format_type(a.atttypid, a.atttypmod), a.attnotnull::text,
                     pg_get_expr(d.adbin, d.adrelid), a.attidentity::text)
      FROM pg_attribute AS a
      JOIN pg_class AS c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'taskboard'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'constraint', conname, pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'taskboard'
    UNION ALL
    SELECT 'type', t.typname, t.typowner::regrole::text
      FROM pg_type AS t WHERE t.typnamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'schema', nspname, concat_ws(' | ', nspowner::regrole::text, nspacl::text)
      FROM pg_namespace WHERE nspname = 'taskboard'
    UNION ALL
    SELECT 'comment', d.objoid::regclass::text || '/' || d.objsubid, d.description
      FROM pg_description AS d
      JOIN pg_class AS c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass
     WHERE c.relnamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'comment', d.objoid::regprocedure::text, d.description
      FROM pg_description AS d
      JOIN pg_proc AS p ON p.oid = d.objoid AND d.classoid = 'pg_proc'::regclass
     WHERE p.pronamespace = 'taskboard'::regnamespace
    UNION ALL
    SELECT 'comment', 'schema', obj_description('taskboard'::regnamespace, 'pg_namespace')
    ORDER BY 1, 2
"""


def catalog(url: str, prefix: str = install.DEFAULT_PREFIX) -> list[tuple[str, ...]]:
    """The catalog of `url`'s taskboard schema, its role names as the default prefix's."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(CATALOG).fetchall()
    rename = re.compile(rf"\b{re.escape(prefix)}_(owner|producer|worker|admin)\b")
    return [tuple(rename.sub(r"taskboard_\1", str(value)) for value in row) for row in rows]


def psql(url: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Pipe `script` into psql (stop at the first error) logged in as `url` says."""
    return subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *args, "-f", "-"],
        input=script,
        env={"PATH": "/usr/bin:/bin", **devdb.libpq_env(url)},
        capture_output=True,
        text=True,
        check=False,
    )


def execute(url: str, *statements: str | sql.Composed) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


class Domain:
    """A fresh role prefix, its databases and logins, all dropped at the end."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.prefix = "t" + uuid.uuid4().hex[:10]
        self.databases: list[str] = []
        self.logins: list[str] = []

    def role(self, kind: str) -> str:
        return f"{self.prefix}_{kind}"

    def database(self) -> str:
        """A new empty database: its superuser URL."""
        name = f"{self.prefix}_db{len(self.databases)}"
        self.databases.append(name)
        return server.recreate_database(self.server_url, name)

    def deployer(self, url: str, prefix: str | None = None) -> str:
        """A CREATEROLE, CREATEDB login (no superuser) owning the database of `url`, admin
        of the roles of `prefix` (default: this domain's) that exist: its URL."""
        login = self.role(f"deployer{len(self.logins)}")
        self.logins.append(login)
        return server.managed_deployer(url, login, prefix=prefix or self.prefix)

    def login(self, name: str, *member_of: str) -> str:
        login = self.role(name)
        self.logins.append(login)
        execute(
            self.server_url,
            sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(login)),
            *(
                sql.SQL("GRANT {} TO {}").format(sql.Identifier(role), sql.Identifier(login))
                for role in member_of
            ),
        )
        return login

    def drop(self) -> None:
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            for name in self.databases:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
            roles = [
                name
                for (name,) in conn.execute(
                    "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)",
                    [self.prefix + "_"],
                )
            ]
            for name in roles:  # what they may still own in the databases of other tests
                conn.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(name)))
            for name in roles:
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))
