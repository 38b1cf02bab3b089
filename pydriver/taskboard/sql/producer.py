"""The producer's calls: enqueue and enqueue_many, and the schema's release."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

from taskboard.sql.parameters import release_of

# -- producers -----------------------------------------------------------------

ENQUEUE = """
SELECT taskboard.enqueue(
    task => %(task)s, payload => %(payload)s::jsonb, queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_key => %(dedupe_key)s)
"""

ENQUEUE_MANY = """
SELECT * FROM taskboard.enqueue_many(
    task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_keys => %(dedupe_keys)s::text[])
"""

# The schema release from which enqueue and enqueue_many take the trace
# context and claim hands it back. The forms with it are used only when
# there is a context to send: the ones without work on every schema.
TRACE_CONTEXT_SINCE = (0, 4, 0)

ENQUEUE_TRACED = """
SELECT taskboard.enqueue(
    task => %(task)s, payload => %(payload)s::jsonb, queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_key => %(dedupe_key)s,
    trace_context => %(trace_context)s::jsonb)
"""

ENQUEUE_MANY_TRACED = """
SELECT * FROM taskboard.enqueue_many(
    task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_keys => %(dedupe_keys)s::text[],
    trace_context => %(trace_context)s::jsonb)
"""


def _enqueue_query(params: dict[str, Any], plain: str, traced: str) -> str:
    return plain if params.get("trace_context") is None else traced


# The calls that take a caller's conn= read their rows through tuple_row (or
# dict_row) cursors: the caller's connection may have any row factory
# (dict_row, class_row, ...).


def _value(conn: psycopg.Connection[Any], query: str, params: dict[str, Any] | None = None) -> Any:
    """The first column of the first row of `query`, None without a row, whatever the
    row factory of `conn`."""
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(query, params).fetchone()
    return None if row is None else row[0]


async def _avalue(
    conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any] | None = None
) -> Any:
    """`_value` on an AsyncConnection."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(query, params)).fetchone()
    return None if row is None else row[0]


# With params["trace_context"] set (JSON text, see trace_context_json), the
# calls take the form that stores it: the caller has made sure the schema
# has it (TRACE_CONTEXT_SINCE).


def enqueue(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    query = _enqueue_query(params, ENQUEUE, ENQUEUE_TRACED)
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(query, params).fetchone()
    assert row is not None
    return int(row[0])


async def aenqueue(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    query = _enqueue_query(params, ENQUEUE, ENQUEUE_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(query, params)).fetchone()
    assert row is not None
    return int(row[0])


def enqueue_many(conn: psycopg.Connection[Any], params: dict[str, Any]) -> list[int]:
    query = _enqueue_query(params, ENQUEUE_MANY, ENQUEUE_MANY_TRACED)
    with conn.cursor(row_factory=tuple_row) as cur:
        return [int(r[0]) for r in cur.execute(query, params).fetchall()]


async def aenqueue_many(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[int]:
    query = _enqueue_query(params, ENQUEUE_MANY, ENQUEUE_MANY_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        return [int(r[0]) for r in await (await cur.execute(query, params)).fetchall()]


def stores_trace_context(conn: psycopg.Connection[Any]) -> bool:
    """Whether the schema on `conn` takes the trace context (TRACE_CONTEXT_SINCE on)."""
    release = release_of(version(conn))
    return release is not None and release >= TRACE_CONTEXT_SINCE


async def astores_trace_context(conn: psycopg.AsyncConnection[Any]) -> bool:
    """`stores_trace_context` for asyncio."""
    release = release_of(await aversion(conn))
    return release is not None and release >= TRACE_CONTEXT_SINCE


def version(conn: psycopg.Connection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not schema_present(conn):
        return None
    release = _value(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)


def schema_present(conn: psycopg.Connection[Any]) -> bool:
    return bool(_value(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"))


async def aversion(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not await _avalue(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"):
        return None
    release = await _avalue(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)
