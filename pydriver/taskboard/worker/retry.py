"""Reconnecting and retrying: backoff delays, and what a database error means for a connection."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import psycopg

RECONNECT_FIRST_SECONDS = 0.1
RECONNECT_MAX_SECONDS = 5.0


class Backoff:
    """Capped exponential delays: 0.1 s, 0.2 s, ... up to 5 s."""

    def __init__(self) -> None:
        self._next = RECONNECT_FIRST_SECONDS

    def reset(self) -> None:
        self._next = RECONNECT_FIRST_SECONDS

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, RECONNECT_MAX_SECONDS)
        return delay


async def sleep_unless_set(event: asyncio.Event, delay: float) -> None:
    """Sleep `delay` seconds, or less when `event` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), delay)


def connection_lost(exc: BaseException, conn: psycopg.AsyncConnection[Any]) -> bool:
    """True when `exc` means the connection itself failed, not the statement."""
    return isinstance(exc, psycopg.OperationalError) and (
        conn.broken or conn.closed or getattr(exc, "sqlstate", None) is None
    )


def needs_new_connection(exc: BaseException, conn: psycopg.AsyncConnection[Any]) -> bool:
    """True when the connection cannot be trusted with the next statement.

    A broken connection, and one whose prepared statements the server no
    longer has (a transaction pooler gave the session another server
    connection): psycopg would keep using the names it prepared.
    """
    return connection_lost(exc, conn) or isinstance(
        exc, (psycopg.errors.InvalidSqlStatementName, psycopg.errors.DuplicatePreparedStatement)
    )
