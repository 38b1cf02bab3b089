# Generated from producer_async.py by dev/taskboard_dev/async_to_sync.py (make sync):
# edit producer_async.py, not this file.
"""The producer's calls: enqueue and enqueue_many."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

from taskboard.sql.producer_async import ENQUEUE, ENQUEUE_MANY, _enqueue_query


def enqueue(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    """The id of the job `params` (enqueue_params) describes."""
    query = _enqueue_query(params, ENQUEUE)
    with conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(query, params)
        row = cur.fetchone()
    assert row is not None
    return int(row[0])


def enqueue_many(conn: psycopg.Connection[Any], params: dict[str, Any]) -> list[int]:
    """The ids of the jobs `params` (enqueue_many_params) describes, in payload order."""
    query = _enqueue_query(params, ENQUEUE_MANY)
    with conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(query, params)
        return [int(r[0]) for r in cur.fetchall()]
