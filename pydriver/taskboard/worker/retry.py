"""Reconnecting and retrying: the reconnect loop, backoff delays, and what a database error
means for a connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from taskboard.connections import Deadline, connect_failure
from taskboard.worker.outcomes import describe

log = logging.getLogger("taskboard.worker")

Connection = psycopg.AsyncConnection[Any]

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
        exc,
        (
            psycopg.errors.InvalidSqlStatementName,
            psycopg.errors.DuplicatePreparedStatement,
            # A server demoted to a standby since: another host of the URL may be the primary.
            psycopg.errors.ReadOnlySqlTransaction,
        ),
    )


class ReconnectNeeded(Exception):
    """The connection must be replaced before the next statement."""


async def reconnecting(
    what: str,
    connect: Callable[[], Awaitable[Connection]],
    session: Callable[[Connection], Awaitable[None]],
    *,
    until: asyncio.Event,
    prepare: Callable[[Connection], Awaitable[None]] | None = None,
    back: str | None = None,
    max_delay: float = RECONNECT_MAX_SECONDS,
    deadline: float | None = None,
) -> None:
    """Run `session` on a connection of its own until `until` is set, reconnecting whenever
    the connection fails.

    Each connection comes from `connect` and is readied by `prepare`, which
    the server must answer within `deadline` seconds. A database error, an
    OSError or ReconnectNeeded there or in `session` is logged ("`what`
    failed (why); retrying in Ns", naming each host's failure when a
    connection could not be made), the connection closed,
    and the next one made after a capped exponential backoff, at most
    `max_delay` seconds. `back` is logged when a connection is ready again
    after a failure. `session` returns once `until` is set.
    """
    backoff = Backoff()
    failing = False
    while not until.is_set():
        try:
            try:
                conn = await connect()
            except psycopg.OperationalError as exc:
                raise ReconnectNeeded(connect_failure(exc)) from exc
            try:
                if prepare is not None:
                    async with Deadline(conn, deadline):
                        await prepare(conn)
                if failing and back is not None:
                    log.info(back)
                failing = False
                backoff.reset()
                await session(conn)
            finally:
                await conn.close()
        except (psycopg.Error, OSError, ReconnectNeeded) as exc:
            failing = True
            delay = min(backoff.next(), max_delay)
            why = str(exc) if isinstance(exc, ReconnectNeeded) else describe(exc)
            log.warning("%s failed (%s); retrying in %.1fs", what, why, delay)
            await sleep_unless_set(until, delay)
