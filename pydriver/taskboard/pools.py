"""An app's own connections for the calls made without `conn`: a pool for sync calls,
and one per event loop for asyncio calls."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, NoReturn

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from taskboard.connections import checked_within, sync_checked_within
from taskboard.settings import CONNECT_TIMEOUT_SECONDS, Settings

log = logging.getLogger("taskboard.app")

# The app's own connections for enqueue without `conn`: a pool for sync
# calls and one per event loop for async calls, each of this many at most.
ENQUEUE_POOL_MIN = 1
ENQUEUE_POOL_MAX = 4
ENQUEUE_POOL_NAME = "taskboard-enqueue"


class EnqueuePools:
    """The app's own autocommit connections for enqueue without `conn`.

    A psycopg_pool pool for sync calls, and one per event loop for async
    calls (an asyncio pool only works on the loop that opened it), each
    opened on first use. A connection is checked before every use, so one
    killed by a server restart is replaced; a broken one is never reused.
    """

    def __init__(
        self, settings: Callable[[], Settings], connect_kwargs: Callable[..., dict[str, Any]]
    ) -> None:
        self._settings = settings  # read at each opening: an app's settings load lazily
        self._connect_kwargs = connect_kwargs
        self._lock = threading.Lock()  # guards the two fields below; held while the sync pool opens
        self._sync: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._async: dict[asyncio.AbstractEventLoop, asyncio.Task[AsyncConnectionPool[Any]]] = {}

    def _options(self) -> dict[str, Any]:
        return {
            "conninfo": self._settings().database_url,
            "kwargs": self._connect_kwargs(autocommit=True),
            "min_size": ENQUEUE_POOL_MIN,
            "max_size": ENQUEUE_POOL_MAX,
            "timeout": CONNECT_TIMEOUT_SECONDS,  # waiting for a connection, then PoolTimeout
            "name": ENQUEUE_POOL_NAME,
            "open": False,
        }

    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        """The sync pool, opened now if it is not open.

        Raises psycopg.OperationalError when the database cannot be reached.
        """
        pool = self._sync
        if pool is not None:
            return pool
        options = self._options()
        with self._lock:
            if self._sync is None:
                pool = ConnectionPool(
                    check=sync_checked_within(self._settings().deadline), **options
                )
                try:
                    pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
                except PoolTimeout as exc:  # the pool has closed itself
                    self._raise_reason(exc)
                self._sync = pool
            return self._sync

    async def apool(self) -> AsyncConnectionPool[Any]:
        """The running loop's pool, opened now if it has none.

        Pools of loops closed since are let go of: their connections close
        when they are collected, since a closed loop cannot run their close.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            opening = self._async.get(loop)
            if opening is None or _failed(opening):
                opening = loop.create_task(self._open_async(self._options()))
                self._async[loop] = opening
                for closed in [other for other in self._async if other.is_closed()]:
                    del self._async[closed]
                    log.debug("let go of the %s pool of a closed event loop", ENQUEUE_POOL_NAME)
        # Shielded: a caller cancelled while the pool opens does not cancel it for the others.
        return await asyncio.shield(opening)

    async def _open_async(self, options: dict[str, Any]) -> AsyncConnectionPool[Any]:
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            check=checked_within(self._settings().deadline), **options
        )
        try:
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
        except PoolTimeout as exc:  # the pool has closed itself
            await asyncio.to_thread(self._raise_reason, exc)
        return pool

    def _raise_reason(self, timeout: PoolTimeout) -> NoReturn:
        """Raise why a pool could not open: the error of one direct connection, else `timeout`."""
        try:
            psycopg.connect(self._settings().database_url, **self._connect_kwargs()).close()
        except psycopg.OperationalError as exc:
            raise exc from timeout
        raise timeout

    def close(self) -> None:
        with self._lock:
            pool, self._sync = self._sync, None
            pools, self._async = self._async, {}
        if pool is not None:
            pool.close()
        for loop, opening in pools.items():
            if loop.is_running():  # in this thread or another: close it there, soon
                asyncio.run_coroutine_threadsafe(_close_opened(opening), loop)
            elif not loop.is_closed() and not _loop_runs_in_this_thread():
                loop.run_until_complete(_close_opened(opening))
            # else: it cannot be closed from here; its connections close when it is collected

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            opening = self._async.pop(loop, None)
        if opening is not None:
            await _close_opened(opening)
        self.close()


def _failed(opening: asyncio.Task[AsyncConnectionPool[Any]]) -> bool:
    return opening.done() and (opening.cancelled() or opening.exception() is not None)


def _loop_runs_in_this_thread() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _close_opened(opening: asyncio.Task[AsyncConnectionPool[Any]]) -> None:
    """Close the pool `opening` opens on the running loop, once it is open."""
    await asyncio.wait([opening])
    if not _failed(opening):
        await opening.result().close()
