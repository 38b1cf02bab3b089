"""Connections to a deployed test database, as the application role that would make each call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg


def connect(url: str, role: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """Open a connection acting as `role` (taskboard_producer, _worker or _admin)."""
    conn = psycopg.connect(url, autocommit=autocommit)
    conn.execute(f"SET ROLE {role}")
    if not autocommit:
        conn.commit()
    return conn


def value(conn: psycopg.Connection[Any], query: str, params: Sequence[Any] | None = None) -> Any:
    """Return the first column of the first row of `query`."""
    row = conn.execute(query, params).fetchone()
    assert row is not None, query
    return row[0]


def expire(url: str, job_id: int) -> None:
    """Move a job's lease deadline into the past, as the table owner does in tests."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET ROLE taskboard_owner")
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [job_id],
        )
