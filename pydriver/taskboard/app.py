"""The application object: task registry, enqueue, and the entry to the worker."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from taskboard import runner, sql
from taskboard.errors import TaskError
from taskboard.events import EventHook
from taskboard.settings import Settings, load_settings, with_overrides
from taskboard.tasks import DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, Handler, Task, worker_queues
from taskboard.worker import Worker

__all__ = ["DEFAULT_MAX_ATTEMPTS", "DEFAULT_QUEUE", "Task", "Taskboard"]

F = TypeVar("F", bound=Handler)
H = TypeVar("H", bound=EventHook)


class Taskboard:
    """Registers tasks, enqueues jobs and runs workers.

    `settings` defaults to Settings read from TASKBOARD_* variables.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings
        self.tasks: dict[str, Task] = {}
        self.hooks: list[EventHook] = []
        self._conn: psycopg.Connection[Any] | None = None
        self._conn_lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings()
        return self._settings

    def task(
        self,
        name: str,
        *,
        queue: str = DEFAULT_QUEUE,
        timeout: float | None = None,
        transactional: bool = False,
    ) -> Callable[[F], F]:
        """Register the decorated `handler(ctx, payload)` as task `name`.

        Async handlers run on the worker's event loop, sync ones in threads.
        With `timeout` (seconds) an async handler is cancelled and the job
        failed; a sync one is failed and abandoned. With `transactional`
        the (async) handler gets `ctx.conn`, and its writes commit only
        together with the job's completion.
        """
        if not name:
            raise TaskError("a task needs a non-empty name")
        if timeout is not None and timeout <= 0:
            raise TaskError(f"task {name!r}: timeout must be positive, got {timeout}")

        def register(handler: F) -> F:
            if name in self.tasks:
                raise TaskError(f"task {name!r} is already registered")
            task = Task(name, handler, queue, timeout, transactional)
            if transactional and not task.is_async:
                raise TaskError(f"task {name!r}: a transactional handler must be `async def`")
            self.tasks[name] = task
            return handler

        return register

    def queue_of(self, task: str, queue: str | None) -> str:
        if queue is not None:
            return queue
        registered = self.tasks.get(task)
        return registered.queue if registered else DEFAULT_QUEUE

    def worker_queues(self) -> list[str]:
        """The queues a worker claims from: settings.queues, else every registered task's queue."""
        return worker_queues(self.tasks, self.settings.queues)

    def on_event(self, hook: H) -> H:
        """Register `hook(event)` for every JobEvent of this app's workers (see taskboard.events).

        Usable as a decorator. Hooks run on the worker's loop and must not block.
        """
        self.hooks.append(hook)
        return hook

    # -- enqueue -----------------------------------------------------------------

    def enqueue(
        self,
        task: str,
        payload: Any = None,
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        dedupe_key: str | None = None,
        conn: psycopg.Connection[Any] | None = None,
    ) -> int:
        """Enqueue one job and return its id.

        With `conn`, the job joins that connection's open transaction and
        vanishes if it rolls back. Without, it commits at once. With
        `dedupe_key`, an unfinished job of the queue holding that key is
        returned instead of a new one.
        """
        params = sql.enqueue_params(
            task, payload, self.queue_of(task, queue), run_at, priority, max_attempts, dedupe_key
        )
        if conn is not None:
            return sql.enqueue(conn, params)
        with self._connection() as own:
            return sql.enqueue(own, params)

    def enqueue_many(
        self,
        task: str,
        payloads: Sequence[Any],
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        dedupe_keys: Sequence[str | None] | None = None,
        conn: psycopg.Connection[Any] | None = None,
    ) -> list[int]:
        """Enqueue one job of `task` per payload in one round trip; ids in payload order."""
        params = sql.enqueue_many_params(
            task, payloads, self.queue_of(task, queue), run_at, priority, max_attempts, dedupe_keys
        )
        if conn is not None:
            return sql.enqueue_many(conn, params)
        with self._connection() as own:
            return sql.enqueue_many(own, params)

    async def aenqueue(
        self,
        task: str,
        payload: Any = None,
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        dedupe_key: str | None = None,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> int:
        """`enqueue` for asyncio code; `conn` is then an AsyncConnection."""
        params = sql.enqueue_params(
            task, payload, self.queue_of(task, queue), run_at, priority, max_attempts, dedupe_key
        )
        if conn is not None:
            return await sql.aenqueue(conn, params)
        async with await psycopg.AsyncConnection.connect(
            self.settings.database_url, **self.connect_kwargs()
        ) as own:
            return await sql.aenqueue(own, params)

    def connect_kwargs(self, *, autocommit: bool = True) -> dict[str, Any]:
        """psycopg connection options every connection of this app uses."""
        return self.settings.connection_options(autocommit=autocommit)

    def _connection(self) -> _OwnConnection:
        return _OwnConnection(self)

    def close(self) -> None:
        """Close the connection `enqueue` keeps for calls without `conn`."""
        with self._conn_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- worker ------------------------------------------------------------------

    async def worker(
        self,
        *,
        stop: asyncio.Event | None = None,
        queries: sql.Queries | None = None,
        **overrides: Any,
    ) -> None:
        """Run a worker until `stop` is set (then shut down gracefully).

        `overrides` replace settings for this worker (e.g. queues, pool_size).
        `queries` makes its SQL calls (a subclass may observe or delay them).
        """
        settings = with_overrides(self.settings, **overrides) if overrides else self.settings
        await Worker(self.tasks, settings, queries=queries, hooks=self.hooks).run(stop)

    def run_worker(self, **overrides: Any) -> None:
        """Run a worker in a new event loop until SIGTERM or SIGINT (see `taskboard.runner`).

        Settings errors raise ConfigError before anything starts.
        """
        if overrides:
            with_overrides(self.settings, **overrides)
        runner.run_until_signalled(lambda stop: self.worker(stop=stop, **overrides))


class _OwnConnection:
    """The app's own autocommit connection for enqueue without `conn`, one caller at a time."""

    def __init__(self, app: Taskboard) -> None:
        self._app = app

    def __enter__(self) -> psycopg.Connection[Any]:
        app = self._app
        app._conn_lock.acquire()
        try:
            if app._conn is None or app._conn.closed or app._conn.broken:
                app._conn = psycopg.connect(app.settings.database_url, **app.connect_kwargs())
            return app._conn
        except BaseException:
            app._conn_lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._app._conn_lock.release()
