"""A registered task's handle, and the groups of jobs enqueued in one transaction."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable
from typing import Any, Generic, ParamSpec, TypeVar

import psycopg

from taskboard.enqueueing import Enqueueing
from taskboard.tasks import Handler, Task

__all__ = ["AsyncGroup", "Group", "TaskHandle"]

R = TypeVar("R")
P = ParamSpec("P")


class TaskHandle(Generic[P, R]):
    """A registered task, as `@app.task` returns it: its handler, and its jobs' enqueue.

    Calling the handle calls the handler (`await send_email(ctx, payload)`
    runs it as the worker would, without a job). `enqueue`, `enqueue_many`
    and their async twins enqueue jobs of the task on its app: the task's
    name, its queue and max_attempts unless the call gives its own, and its
    payload model's validation. `name`, `queue`, `task` (the registered
    Task) and `handler` describe it; `__name__`, `__doc__` and `__wrapped__`
    are the handler's.
    """

    __name__: str  # the handler's, as functools.update_wrapper copies them
    __wrapped__: Handler

    def __init__(self, app: Enqueueing, task: Task) -> None:
        functools.update_wrapper(self, task.handler)
        self._app = app
        self._task = task

    @property
    def task(self) -> Task:
        return self._task

    @property
    def name(self) -> str:
        return self._task.name

    @property
    def queue(self) -> str:
        return self._task.queue

    @property
    def handler(self) -> Callable[P, R]:
        handler: Callable[P, R] = self._task.handler
        return handler

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.handler(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<TaskHandle {self.name!r} queue={self.queue!r}>"

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    def enqueue(
        self,
        payload: Any = None,
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        dedupe_key: str | None = None,
        concurrency_key: str | None = None,
        depends_on: Iterable[int] | None = None,
        on_dependency_failure: str = "cancel",
        conn: psycopg.Connection[Any] | None = None,
    ) -> int:
        """Enqueue one job of this task and return its id (see Taskboard.enqueue)."""
        return self._app.enqueue(
            self.name,
            payload,
            queue=queue,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            dedupe_key=dedupe_key,
            concurrency_key=concurrency_key,
            depends_on=depends_on,
            on_dependency_failure=on_dependency_failure,
            conn=conn,
        )

    def enqueue_many(
        self,
        payloads: Iterable[Any],
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        dedupe_keys: Iterable[str | None] | None = None,
        concurrency_keys: Iterable[str | None] | None = None,
        conn: psycopg.Connection[Any] | None = None,
    ) -> list[int]:
        """Enqueue one job of this task per payload in one round trip (see
        Taskboard.enqueue_many); ids in payload order."""
        return self._app.enqueue_many(
            self.name,
            payloads,
            queue=queue,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            dedupe_keys=dedupe_keys,
            concurrency_keys=concurrency_keys,
            conn=conn,
        )

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    async def aenqueue(
        self,
        payload: Any = None,
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        dedupe_key: str | None = None,
        concurrency_key: str | None = None,
        depends_on: Iterable[int] | None = None,
        on_dependency_failure: str = "cancel",
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> int:
        """Enqueue one job of this task and return its id (see Taskboard.aenqueue)."""
        return await self._app.aenqueue(
            self.name,
            payload,
            queue=queue,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            dedupe_key=dedupe_key,
            concurrency_key=concurrency_key,
            depends_on=depends_on,
            on_dependency_failure=on_dependency_failure,
            conn=conn,
        )

    async def aenqueue_many(
        self,
        payloads: Iterable[Any],
        *,
        queue: str | None = None,
        run_at: dt.datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        dedupe_keys: Iterable[str | None] | None = None,
        concurrency_keys: Iterable[str | None] | None = None,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> list[int]:
        """Enqueue one job of this task per payload in one round trip (see
        Taskboard.aenqueue_many); ids in payload order."""
        return await self._app.aenqueue_many(
            self.name,
            payloads,
            queue=queue,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            dedupe_keys=dedupe_keys,
            concurrency_keys=concurrency_keys,
            conn=conn,
        )

    # -- end of the asyncio calls


# -- generated sync calls: made from the asyncio calls below by make sync
# (dev/taskboard_dev/async_to_sync.py); edit those, not these.


class Group:
    """Jobs enqueued in one transaction, as `Taskboard.group` gives them.

    `enqueue` and `enqueue_many` take a task's name or its TaskHandle and
    the options of Taskboard.enqueue and enqueue_many but `conn`; any other
    call given `conn=group.conn` (a psycopg.Connection: a task handle's
    enqueue, app.cancel, your own SQL) joins the same transaction.
    """

    def __init__(self, app: Enqueueing, conn: psycopg.Connection[Any]) -> None:
        self._app = app
        self.conn = conn

    def enqueue(self, task: str | TaskHandle[..., Any], payload: Any = None, **options: Any) -> int:
        """Enqueue one job in the group and return its id (see Taskboard.enqueue)."""
        if isinstance(task, TaskHandle):
            return task.enqueue(payload, conn=self.conn, **options)
        return self._app.enqueue(task, payload, conn=self.conn, **options)

    def enqueue_many(
        self, task: str | TaskHandle[..., Any], payloads: Iterable[Any], **options: Any
    ) -> list[int]:
        """Enqueue one job per payload in the group; ids in payload order (see
        Taskboard.enqueue_many)."""
        if isinstance(task, TaskHandle):
            return task.enqueue_many(payloads, conn=self.conn, **options)
        return self._app.enqueue_many(task, payloads, conn=self.conn, **options)


# -- end of the generated sync calls

# -- asyncio calls: the source of the generated sync calls above (make sync) ------


class AsyncGroup:
    """Jobs enqueued in one transaction, as `Taskboard.agroup` gives them.

    `aenqueue` and `aenqueue_many` take a task's name or its TaskHandle and
    the options of Taskboard.aenqueue and aenqueue_many but `conn`; any other
    call given `conn=group.conn` (a psycopg.AsyncConnection: a task handle's
    aenqueue, app.acancel, your own SQL) joins the same transaction.
    """

    def __init__(self, app: Enqueueing, conn: psycopg.AsyncConnection[Any]) -> None:
        self._app = app
        self.conn = conn

    async def aenqueue(
        self, task: str | TaskHandle[..., Any], payload: Any = None, **options: Any
    ) -> int:
        """Enqueue one job in the group and return its id (see Taskboard.aenqueue)."""
        if isinstance(task, TaskHandle):
            return await task.aenqueue(payload, conn=self.conn, **options)
        return await self._app.aenqueue(task, payload, conn=self.conn, **options)

    async def aenqueue_many(
        self, task: str | TaskHandle[..., Any], payloads: Iterable[Any], **options: Any
    ) -> list[int]:
        """Enqueue one job per payload in the group; ids in payload order (see
        Taskboard.aenqueue_many)."""
        if isinstance(task, TaskHandle):
            return await task.aenqueue_many(payloads, conn=self.conn, **options)
        return await self._app.aenqueue_many(task, payloads, conn=self.conn, **options)


# -- end of the asyncio calls
