"""How an app makes a call: on the caller's connection, else on one of its own pools.

`Calls` is the base of the app's parts (enqueueing, queue control, job admin,
results): it holds the settings, the pools and the database's Schema, and
makes each SQL call of taskboard.sql in the role it needs, its errors
translated (taskboard.errors).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg

from taskboard.connections import Deadline
from taskboard.errors import translate
from taskboard.pools import EnqueuePools
from taskboard.settings import Settings, load_settings
from taskboard.sql import parameters, session, session_async
from taskboard.sql.schema import Schema

__all__ = ["ADMIN_ROLE", "PRODUCER_ROLE", "Calls"]

# The roles whose grant allows enqueue and enqueue_many, and queue control.
PRODUCER_ROLE = "taskboard_producer (PREFIX_producer if installed with another prefix)"
ADMIN_ROLE = "taskboard_admin (PREFIX_admin if installed with another prefix)"

R = TypeVar("R")


class Calls:
    """The settings, the pools of connections and the Schema an app's calls share.

    `settings` defaults to Settings read from TASKBOARD_* variables, when
    first needed.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings
        # Both read when a pool opens: the settings load lazily, and connect_kwargs may be replaced.
        self._pools = EnqueuePools(lambda: self.settings, lambda **kw: self.connect_kwargs(**kw))
        # The database's Schema, read at the first call (_check_schema).
        self._schema: Schema | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings()
        return self._settings

    def connect_kwargs(self, *, autocommit: bool = True) -> dict[str, Any]:
        """psycopg connection options every connection of this app uses."""
        return self.settings.connection_options(autocommit=autocommit)

    def close(self) -> None:
        """Close the connections enqueue keeps for calls without `conn`.

        Closes the sync pool at once. An async pool is closed on its own
        event loop: now when that loop is idle, soon (without waiting) when
        it is running; one whose loop has closed cannot be, and its
        connections close when it is collected. From async code, `aclose`
        waits for the running loop's pool. A later enqueue opens a new pool.
        """
        self._pools.close()

    async def aclose(self) -> None:
        """Close the pool aenqueue keeps for the running event loop, then as `close` does."""
        await self._pools.aclose()

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    def _produce(
        self,
        name: str,
        call: Callable[[psycopg.Connection[Any], dict[str, Any]], R],
        params: dict[str, Any],
        conn: psycopg.Connection[Any] | None,
        *,
        role: str = PRODUCER_ROLE,
    ) -> R:
        """Make the call `name` (public), which `role` may make, on `conn`, else on a
        connection of the app's pool. TypeError when `conn` is not a
        psycopg.Connection."""
        if conn is not None:
            parameters.check_connection(name, conn, psycopg.Connection)
            with translate(role_needed=role):
                self._check_schema(conn)
                return call(conn, params)
        pool = self._pools.pool()
        # A server that stops answering drops the connection at the deadline.
        limit = self.settings.deadline
        with pool.connection() as own, Deadline(own, limit), translate(role_needed=role):
            self._check_schema(own)
            return call(own, params)

    def _check_schema(self, conn: psycopg.Connection[Any]) -> None:
        """Read the database's Schema at the app's first call: SchemaVersionError, one line
        naming the fix, when this driver cannot work with it."""
        if self._schema is None:
            self._schema = session.read_schema(conn)

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    async def _aproduce(
        self,
        name: str,
        call: Callable[[psycopg.AsyncConnection[Any], dict[str, Any]], Awaitable[R]],
        params: dict[str, Any],
        conn: psycopg.AsyncConnection[Any] | None,
        *,
        role: str = PRODUCER_ROLE,
    ) -> R:
        """Make the call `name` (public), which `role` may make, on `conn`, else on a
        connection of the app's pool. TypeError when `conn` is not a
        psycopg.AsyncConnection."""
        if conn is not None:
            parameters.check_connection(name, conn, psycopg.AsyncConnection)
            with translate(role_needed=role):
                await self._acheck_schema(conn)
                return await call(conn, params)
        pool = await self._pools.apool()
        # A server that stops answering drops the connection at the deadline.
        limit = self.settings.deadline
        async with pool.connection() as own, Deadline(own, limit):
            with translate(role_needed=role):
                await self._acheck_schema(own)
                return await call(own, params)

    async def _acheck_schema(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Read the database's Schema at the app's first call: SchemaVersionError, one line
        naming the fix, when this driver cannot work with it."""
        if self._schema is None:
            self._schema = await session_async.aread_schema(conn)

    # -- end of the asyncio calls
