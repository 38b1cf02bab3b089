"""Connections that notice a server that stopped answering, and say why one could not be made.

TCP keepalives and `tcp_user_timeout` (Settings.connection_options) notice a
host or a network that went away. They cannot notice a server whose host
still answers TCP while its processes are stopped (a stuck host, a stopped
postmaster): the kernel acknowledges every packet. A statement deadline
covers both. Past it, `Deadline` shuts the connection's socket down, so the
statement fails at once with NoAnswer and the connection is broken, to be
replaced. It sends no cancel request: that would go to the same server and
wait as long, and psycopg waits for the statement's end after one.

Connecting through a multi-host URL tries each host in turn; `connect_failure`
names every host's failure in one line.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

# A connection attempt's failure as psycopg lists it after the hosts it tried.
ATTEMPT = re.compile(
    r"^- host: (?:'(?P<host>[^']*)'|None), port: (?:'(?P<port>[^']*)'|None),"
    r" hostaddr: (?:'[^']*'|None): (?P<why>.*)$"
)
# libpq's own prefix of an attempt's failure, which the host already names.
LIBPQ_PREFIX = re.compile(
    r'^(?:connection failed: )?connection to server (?:at "[^"]*"(?: \([^)]*\))?, port \S+|on socket "[^"]*") failed: '
)
READ_ONLY = "session is read-only"
MULTIPLE_ATTEMPTS = "Multiple connection attempts failed. All failures were:"
# How often a deadline that found no statement on its way looks again.
IDLE_RECHECK_SECONDS = 0.1


class NoAnswer(psycopg.OperationalError):
    """The server did not answer a statement within its deadline: the connection was dropped."""


def drop(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Shut the connection's socket down, without a word to the server: whatever waits on it
    fails at once, and psycopg marks the connection broken."""
    try:
        fd = conn.pgconn.socket
    except psycopg.OperationalError:  # closed already
        return
    sock = socket.socket(fileno=fd)
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.detach()  # the connection still owns the descriptor


def where(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> str:
    """`host:port` of the server `conn` is connected to, as far as it can be read."""
    try:
        return f"{conn.info.host}:{conn.info.port}"
    except psycopg.Error:
        return "the server"


class Deadline:
    """`with Deadline(conn, seconds):` (or `async with`): the statements of the block must be
    answered within `seconds`, else the connection is dropped and they raise NoAnswer.

    `seconds` None: no deadline. The block must not close `conn`.
    """

    def __init__(
        self, conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any], seconds: float | None
    ) -> None:
        self.conn = conn
        self.seconds = seconds
        self.fired_at: str | None = None  # where the connection went, once dropped
        self._lock = threading.Lock()
        self._done = False
        self._handle: asyncio.TimerHandle | None = None
        self._entry: list[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waited_idle = False  # whether the deadline found no statement on its way
        self._seen_in_flight: float | None = None  # when one was first seen after that

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            if not _in_flight(self.conn):
                # No statement sent yet (the block is busy before it: a handler's
                # code, a process stopped and resumed): the deadline counts from
                # the moment one is seen on its way.
                self._rearm(IDLE_RECHECK_SECONDS)
                self._seen_in_flight = None
                return
            now = time.monotonic()
            if self._seen_in_flight is None and self._waited_idle:
                self._seen_in_flight = now
            if self._seen_in_flight is not None and now - self._seen_in_flight < (
                self.seconds or 0
            ):
                self._rearm(self._seen_in_flight + (self.seconds or 0) - now)
                return
            self.fired_at = where(self.conn)
            drop(self.conn)

    def _rearm(self, seconds: float) -> None:
        """Look again in `seconds` (called with the lock held, the block not ended)."""
        self._waited_idle = True
        if self._loop is not None:
            self._handle = self._loop.call_later(seconds, self._fire)
        else:
            self._entry = _WATCH.add(time.monotonic() + seconds, self._fire)

    def _end(self, exc: BaseException | None) -> None:
        with self._lock:
            self._done = True
        if self.fired_at is not None and isinstance(exc, psycopg.OperationalError):
            raise NoAnswer(
                f"no answer from {self.fired_at} within {self.seconds:g}s: connection dropped"
            ) from exc

    def __enter__(self) -> Deadline:
        if self.seconds is not None:
            self._entry = _WATCH.add(time.monotonic() + self.seconds, self._fire)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            if self._entry is not None:
                _WATCH.remove(self._entry)
        self._end(exc)

    async def __aenter__(self) -> Deadline:
        if self.seconds is not None:
            self._loop = asyncio.get_running_loop()
            self._handle = self._loop.call_later(self.seconds, self._fire)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.cancel()
        self._end(exc)


def _in_flight(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    """Whether a statement of `conn` is on its way to the server or awaits its answer."""
    try:
        return conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.ACTIVE
    except psycopg.Error:
        return True  # closed or broken: nothing to wait for, drop it


class _Watch:
    """One thread that fires the deadlines of sync blocks (a timer thread each would cost a
    thread a statement)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[list[Any]] = []  # [when, n, callback or None once removed]
        self._n = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, when: float, callback: Any) -> list[Any]:
        entry = [when, next(self._n), callback]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="taskboard-deadlines", daemon=True
                )
                self._thread.start()
            self._cond.notify()
        return entry

    def remove(self, entry: list[Any]) -> None:
        with self._cond:
            entry[2] = None

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                delay = self._heap[0][0] - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                callback = heapq.heappop(self._heap)[2]
            if callback is not None:
                callback()


_WATCH = _Watch()


def connect_failure(exc: BaseException) -> str:
    """One line saying why a connection could not be made: each host's failure when psycopg
    tried several (a multi-host URL), and a read-only server named as such."""
    message = str(exc)
    if MULTIPLE_ATTEMPTS in message:
        tried = []
        for line in message.split(MULTIPLE_ATTEMPTS, 1)[1].splitlines():
            match = ATTEMPT.match(line.strip())
            if match:
                host = match["host"] or "localhost"
                port = match["port"] or "5432"
                tried.append(f"{host}:{port}: {_reason(LIBPQ_PREFIX.sub('', match['why']))}")
        if tried:
            return "no host would do: " + "; ".join(tried)
    first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    return _reason(first)


def _reason(why: str) -> str:
    """`why`, a read-only server's refusal said plainly."""
    why = why.strip()
    if why.endswith(READ_ONLY):
        return why[: -len(READ_ONLY)] + "the server is read-only (a standby, or a demoted primary)"
    return why


def checked_within(
    seconds: float,
) -> Callable[[psycopg.AsyncConnection[Any]], Awaitable[None]]:
    """A psycopg_pool `check` for an asyncio pool: the pool's own check, answered within
    `seconds` (a connection to a server that stopped answering is dropped, not lent)."""

    async def check(conn: psycopg.AsyncConnection[Any]) -> None:
        async with Deadline(conn, seconds):
            await AsyncConnectionPool.check_connection(conn)

    return check


def sync_checked_within(seconds: float) -> Callable[[psycopg.Connection[Any]], None]:
    """`checked_within` for a sync pool."""

    def check(conn: psycopg.Connection[Any]) -> None:
        with Deadline(conn, seconds):
            ConnectionPool.check_connection(conn)

    return check
