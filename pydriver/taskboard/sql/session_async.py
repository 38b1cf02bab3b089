"""What a session finds in the database: the schema's release and what it supports,
and which Taskboard roles the login has. The calls on a caller's connection read
their rows through their own cursors: that connection may have any row factory
(dict_row, class_row, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from taskboard.sql.schema import Schema, schema_of


async def avalue(
    conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any] | None = None
) -> Any:
    """The first column of the first row of `query`, None without a row, whatever the
    row factory of `conn`."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params)
        row = await cur.fetchone()
    return None if row is None else row[0]


async def aschema_present(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether the taskboard schema is installed in the database of `conn`."""
    return bool(await avalue(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"))


async def aversion(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not await aschema_present(conn):
        return None
    release = await avalue(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)


async def aread_schema(conn: psycopg.AsyncConnection[Any]) -> Schema:
    """The database's Schema; SchemaVersionError, one line naming the fix, when there is
    none or this driver cannot work with it."""
    return schema_of(await aversion(conn))


# Who this session is and which Taskboard roles it has the rights of, from the
# catalogs alone (any login may read them, with or without USAGE on the schema).
# The prefix is the schema owner's name less `_owner` (NULL without the schema, or
# for an owner named otherwise); the login comes quoted as SQL would need it.
LOGIN_ROLES = """
SELECT pg_catalog.quote_ident(current_user) AS login,
       o.prefix,
       ARRAY(SELECT k.kind
               FROM unnest(ARRAY['producer', 'worker', 'admin']) WITH ORDINALITY AS k(kind, n)
               JOIN pg_catalog.pg_roles AS r ON r.rolname = o.prefix || '_' || k.kind
              WHERE pg_catalog.pg_has_role(r.oid, 'USAGE')
              ORDER BY k.n) AS holds
  FROM (SELECT (SELECT pg_catalog.substring(pg_catalog.pg_get_userbyid(n.nspowner),
                                            '^([a-z_][a-z0-9_]*)_owner$')
                  FROM pg_catalog.pg_namespace AS n
                 WHERE n.nspname = 'taskboard') AS prefix) AS o
"""


@dataclass(frozen=True, slots=True)
class LoginRoles:
    """The session's login and the Taskboard roles whose rights it has."""

    login: str  # quoted as an identifier where SQL needs it
    prefix: str | None  # of the schema's roles (owner PREFIX_owner); None when unknown
    holds: tuple[str, ...]  # of producer, worker, admin


def _login_roles(row: Sequence[Any] | None) -> LoginRoles:
    assert row is not None
    login, prefix, holds = row
    return LoginRoles(str(login), prefix, tuple(holds))


async def alogin_roles(conn: psycopg.AsyncConnection[Any]) -> LoginRoles:
    """Which Taskboard roles the session's login may use; works for any login."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(LOGIN_ROLES)
        return _login_roles(await cur.fetchone())
