"""The producer's calls: enqueue and enqueue_many."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

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


# With params["trace_context"] set (JSON text, see trace_context_json), the
# calls take the form that stores it: the caller has made sure the schema
# has it (TRACE_CONTEXT_SINCE).


async def aenqueue(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    """The id of the job `params` (enqueue_params) describes."""
    query = _enqueue_query(params, ENQUEUE, ENQUEUE_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params)
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def aenqueue_many(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[int]:
    """The ids of the jobs `params` (enqueue_many_params) describes, in payload order."""
    query = _enqueue_query(params, ENQUEUE_MANY, ENQUEUE_MANY_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params)
        return [int(r[0]) for r in await cur.fetchall()]
