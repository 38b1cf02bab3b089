# Generated from session_async.py by dev/taskboard_dev/async_to_sync.py (make sync):
# edit session_async.py, not this file.
"""What a session finds in the database: the schema's release and what it supports,
and which Taskboard roles the login has. The calls on a caller's connection read
their rows through their own cursors: that connection may have any row factory
(dict_row, class_row, ...).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

from taskboard.sql.schema import Schema, schema_of
from taskboard.sql.session_async import LOGIN_ROLES, LoginRoles, _login_roles


def value(conn: psycopg.Connection[Any], query: str, params: dict[str, Any] | None = None) -> Any:
    """The first column of the first row of `query`, None without a row, whatever the
    row factory of `conn`."""
    with conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(query, params)
        row = cur.fetchone()
    return None if row is None else row[0]


def schema_present(conn: psycopg.Connection[Any]) -> bool:
    """Whether the taskboard schema is installed in the database of `conn`."""
    return bool(value(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"))


def version(conn: psycopg.Connection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not schema_present(conn):
        return None
    release = value(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)


def read_schema(conn: psycopg.Connection[Any]) -> Schema:
    """The database's Schema; SchemaVersionError, one line naming the fix, when there is
    none or this driver cannot work with it."""
    return schema_of(version(conn))


def login_roles(conn: psycopg.Connection[Any]) -> LoginRoles:
    """Which Taskboard roles the session's login may use; works for any login."""
    with conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(LOGIN_ROLES)
        return _login_roles(cur.fetchone())
