"""The producer's calls: enqueue and enqueue_many."""

from __future__ import annotations

from functools import cache
from typing import Any

import psycopg
from psycopg.rows import tuple_row

# -- producers -----------------------------------------------------------------

ENQUEUE = """
SELECT taskboard.enqueue(
    task => %(task)s, payload => %(payload)s::jsonb, queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_key => %(dedupe_key)s{})
"""

ENQUEUE_MANY = """
SELECT * FROM taskboard.enqueue_many(
    task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_keys => %(dedupe_keys)s::text[]{})
"""

# The arguments a call sends only when it has a value for them: a call without
# them is the shortest statement, and its plan the one every such call shares.
OPTIONAL = (
    ("concurrency_key", ",\n    concurrency_key => %(concurrency_key)s"),
    ("depends_on", ",\n    depends_on => %(depends_on)s::bigint[]"),
    ("on_dependency_failure", ",\n    on_dependency_failure => %(on_dependency_failure)s"),
    ("concurrency_keys", ",\n    concurrency_keys => %(concurrency_keys)s::text[]"),
    ("trace_context", ",\n    trace_context => %(trace_context)s::jsonb"),
)


@cache
def _query(template: str, present: frozenset[str]) -> str:
    return template.format("".join(arg for name, arg in OPTIONAL if name in present))


def _enqueue_query(params: dict[str, Any], template: str) -> str:
    """`template` with the optional arguments `params` has values for."""
    return _query(template, frozenset(n for n, _ in OPTIONAL if params.get(n) is not None))


async def aenqueue(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    """The id of the job `params` (enqueue_params) describes."""
    query = _enqueue_query(params, ENQUEUE)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params)
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def aenqueue_many(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[int]:
    """The ids of the jobs `params` (enqueue_many_params) describes, in payload order."""
    query = _enqueue_query(params, ENQUEUE_MANY)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query, params)
        return [int(r[0]) for r in await cur.fetchall()]
