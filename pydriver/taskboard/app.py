"""The application object: task registry, enqueue, and the entry to the worker.

`Taskboard` is the public face; its calls are made by the parts it is built
from, one job each: taskboard.enqueueing (enqueue), taskboard.queue_control
(pause, resume, limits), taskboard.job_admin (get_job, jobs, cancel, retry,
prune) and taskboard.results (result), over taskboard.calls (connections,
roles, the Schema). taskboard.handles holds TaskHandle and the groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar

import psycopg

from taskboard import metrics, runner
from taskboard.enqueueing import Enqueueing
from taskboard.errors import InvalidArgument, TaskError
from taskboard.events import EventHook
from taskboard.handles import AsyncGroup, Group, TaskHandle
from taskboard.periodic import Schedule, parse_cron, schedule
from taskboard.pools import ENQUEUE_POOL_MAX
from taskboard.queue_control import QueueControl
from taskboard.results import Results
from taskboard.retries import RetryPolicy, retry_policy
from taskboard.settings import Settings, name_problem, with_overrides
from taskboard.sql import parameters
from taskboard.sql.worker import Queries
from taskboard.tasks import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_QUEUE,
    Handler,
    PayloadModel,
    Task,
    payload_model,
)
from taskboard.worker import Worker
from taskboard.worker.host import HandlerProcesses

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_QUEUE",
    "ENQUEUE_POOL_MAX",
    "AsyncGroup",
    "Group",
    "Task",
    "TaskHandle",
    "Taskboard",
]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Handler)
H = TypeVar("H", bound=EventHook)
R = TypeVar("R")
P = ParamSpec("P")


class Taskboard(Enqueueing, QueueControl, Results):
    """Registers tasks, enqueues jobs and runs workers.

    `settings` defaults to Settings read from TASKBOARD_* variables.

    Every call on jobs and queues (enqueue, pause, get_job, cancel, prune,
    ...) takes `conn=`: a psycopg.Connection, or a psycopg.AsyncConnection
    for its async twin (aenqueue, apause, ...), with any row factory. The
    call then runs in that connection's transaction: what it writes commits
    when the caller commits and vanishes if the caller rolls back. psycopg
    begins a transaction when none is open (the caller must commit it); in
    autocommit the call commits at once. A closed connection raises
    psycopg.OperationalError, one in a failed transaction
    psycopg.errors.InFailedSqlTransaction, as any statement there would.
    Anything but the psycopg connection of the call's kind raises one
    TypeError naming the call to use, or how to reach the psycopg
    connection under a Django or SQLAlchemy object. Without `conn`, a
    connection of the app's pool makes the call and commits it.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.hooks: list[EventHook] = []
        self.schedules: dict[str, Schedule] = {}

    def task(
        self,
        name: str,
        *,
        queue: str = DEFAULT_QUEUE,
        timeout: float | None = None,
        transactional: bool = False,
        max_attempts: int | None = None,
        retry: RetryPolicy | None = None,
        payload: PayloadModel | None = None,
    ) -> Callable[[Callable[P, R]], TaskHandle[P, R]]:
        """Register the decorated `handler(ctx, payload)` as task `name`; return its TaskHandle.

        Async handlers run on the worker's event loop, sync ones in threads.
        With `timeout` (seconds) an async handler is cancelled and the job
        failed; a sync one is failed and abandoned. With `transactional`
        the (async) handler gets `ctx.conn`, and its writes commit only
        together with the job's completion. `max_attempts` is the default of
        enqueue for this task (a caller's own value wins). `retry` gives the
        delay before the next attempt when the handler raises: an
        ExponentialBackoff, or a callable (attempt, exception) -> seconds
        (None: the database's backoff).

        A pydantic model validates the task's payloads: `payload`, else the
        handler's annotation of its payload parameter when that is a model
        (resolved in the handler's module). Enqueue then validates each
        payload (InvalidArgument naming the field when it does not) and
        stores `model_dump(mode="json")`; the handler receives an instance
        of the model, and a stored payload the model refuses fails its job
        without a retry.

        The handle calls the handler when called, and enqueues the task's
        jobs (`enqueue`, `aenqueue`, ...). Raises TaskError for a bad option.
        """
        problem = name_problem("a task's name", name) or name_problem(
            f"task {name!r}: queue", queue
        )
        if problem:
            raise TaskError(problem)
        if timeout is not None and not (
            isinstance(timeout, int | float) and 0 < timeout < math.inf
        ):
            raise TaskError(f"task {name!r}: timeout must be a positive number, got {timeout!r}")
        if max_attempts is not None and (
            isinstance(max_attempts, bool)
            or not isinstance(max_attempts, int)
            or not 1 <= max_attempts <= parameters.INT4_MAX
        ):
            raise TaskError(
                f"task {name!r}: max_attempts must be an integer from 1 to {parameters.INT4_MAX}, "
                f"got {max_attempts!r}"
            )
        try:
            policy = retry_policy("retry", retry)
        except InvalidArgument as exc:
            raise TaskError(f"task {name!r}: {exc}") from None

        def register(handler: Callable[P, R]) -> TaskHandle[P, R]:
            if name in self.tasks:
                raise TaskError(f"task {name!r} is already registered")
            if isinstance(handler, TaskHandle):  # stacked @app.task: the same handler
                handler = handler.handler
            model = payload_model(name, handler, payload)
            task = Task(name, handler, queue, timeout, transactional, max_attempts, policy, model)
            if transactional and not task.is_async:
                raise TaskError(f"task {name!r}: a transactional handler must be `async def`")
            self.tasks[name] = task
            return TaskHandle(self, task)

        return register

    def periodic(
        self,
        cron: str,
        *,
        name: str | None = None,
        queue: str | None = None,
        payload: Any = None,
        priority: int = 0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        previous_names: Sequence[str] = (),
    ) -> Callable[[F], F]:
        """Enqueue a job of the decorated task at every slot of `cron`; put it above `@app.task`.

        `cron` has five fields, or six with seconds first, and fires in UTC.
        Every worker of the app runs the schedule and there is no leader:
        taskboard.enqueue_periodic makes each slot one job however many
        workers send it, counted on the database clock. `name` (default: the
        task's) identifies the schedule in taskboard.schedules; `queue`
        (default: the task's), `payload`, `priority` and `max_attempts` are
        the job's. A schedule renamed lists its former names in
        `previous_names`: its slots carry over, so no slot the old name had
        is enqueued again. The schedule's task and queue are part of each
        slot: a slot taken under this name for another task or queue is a
        conflict the worker logs, never this schedule's job. Raises
        TaskError for a cron or argument that cannot be used, a handler not
        registered with `@app.task`, and a name taken.
        A task's payload model validates `payload` here (TaskError when it
        does not).
        """
        parsed = parse_cron(cron)

        def register(handler: F) -> F:
            if isinstance(handler, TaskHandle):
                mine = self.tasks.get(handler.name) is handler.task
                tasks = [handler.task] if mine else []
            else:
                tasks = [t for t in self.tasks.values() if t.handler is handler]
            what = f"periodic {cron!r}: {getattr(handler, '__name__', handler)!r}"
            if not tasks:
                raise TaskError(f"{what} is not a task: put @app.periodic above @app.task")
            if len(tasks) > 1:
                names = ", ".join(t.name for t in tasks)
                raise TaskError(f"{what} is the handler of several tasks ({names}): schedule one")
            task = tasks[0]
            try:
                stored = task.stored_payload(payload)
            except InvalidArgument as exc:
                raise TaskError(f"periodic {cron!r}: {exc}") from None
            declared = schedule(
                name=task.name if name is None else name,
                cron=parsed,
                task=task.name,
                queue=task.queue if queue is None else queue,
                payload=stored,
                priority=priority,
                max_attempts=max_attempts,
                previous_names=previous_names,
            )
            if declared.name in self.schedules:
                raise TaskError(f"periodic {declared.name!r} is already scheduled: give it a name")
            # A former name is no live schedule's: its slots would be taken over by this one.
            for other in self.schedules.values():
                if other.name in declared.previous_names or declared.name in other.previous_names:
                    old, new = (
                        (other.name, declared.name)
                        if other.name in declared.previous_names
                        else (declared.name, other.name)
                    )
                    raise TaskError(
                        f"periodic {new!r}: previous_names lists {old!r}, a schedule this app "
                        f"still declares (its slots would be taken by {new!r})"
                    )
            self.schedules[declared.name] = declared
            return handler

        return register

    def on_event(self, hook: H) -> H:
        """Register `hook(event)` for every JobEvent of this app's workers (see taskboard.events).

        Usable as a decorator. Hooks run on the worker's loop and must not block.
        """
        self.hooks.append(hook)
        return hook

    # -- groups of jobs enqueued together ---------------------------------------------

    @contextlib.contextmanager
    def group(self) -> Iterator[Group]:
        """Enqueue jobs that commit together: `with app.group() as g: g.enqueue(...)`.

        The group's calls run on one connection of the app's pool, in one
        transaction: it commits when the block ends, and rolls back, taking
        every job of the group with it, when the block raises. A job of the
        group may depend on the group's earlier jobs (`depends_on=[their
        ids]`); no worker sees any of them before the commit. A call that
        failed in the database spoils the transaction: the block's end then
        raises psycopg.errors.InFailedSqlTransaction, and nothing commits.
        """
        pool = self._pools.pool()
        with pool.connection() as conn, conn.transaction():
            yield Group(self, conn)
            _raise_if_failed(conn.info.transaction_status)

    @contextlib.asynccontextmanager
    async def agroup(self) -> AsyncIterator[AsyncGroup]:
        """`group` for asyncio: `async with app.agroup() as g: await g.aenqueue(...)`."""
        pool = await self._pools.apool()
        async with pool.connection() as conn, conn.transaction():
            yield AsyncGroup(self, conn)
            _raise_if_failed(conn.info.transaction_status)

    # -- worker ------------------------------------------------------------------

    async def worker(
        self,
        *,
        stop: asyncio.Event | None = None,
        queries: Queries | None = None,
        processes: HandlerProcesses | None = None,
        **overrides: Any,
    ) -> None:
        """Run a worker until `stop` is set (then shut down gracefully).

        `overrides` replace settings for this worker (e.g. queues, pool_size).
        `queries` makes its SQL calls (a subclass may observe or delay them).
        `processes`: its handlers run in those processes (``taskboard worker
        --processes N``), and it claims and settles for all of them.
        With `metrics_port` set, the worker serves Prometheus /metrics meanwhile
        (see taskboard.metrics); ConfigError when it cannot.
        """
        settings = with_overrides(self.settings, **overrides) if overrides else self.settings
        port = settings.metrics_port
        observed = None if port is None else metrics.WorkerMetrics()
        worker = Worker(
            self.tasks,
            settings,
            queries=queries,
            hooks=self.hooks if observed is None else [*self.hooks, observed.hook],
            schedules=list(self.schedules.values()),
            processes=processes,
        )
        if observed is None or port is None:
            await worker.run(stop)
            return
        observed.watch(
            running=lambda: worker.running_handlers,
            free=lambda: worker.free_slots,
            held=lambda: len(worker.ledger),
        )
        server = metrics.Server(observed.registry, settings.metrics_host, port)
        log.info("worker metrics on http://%s:%d/metrics", server.host, server.port)
        try:
            await worker.run(stop)
        finally:
            await asyncio.to_thread(server.close)  # shutdown() waits for the serving thread

    def run_worker(self, *, processes: HandlerProcesses | None = None, **overrides: Any) -> None:
        """Run a worker in a new event loop until SIGTERM or SIGINT (see `taskboard.runner`).

        Settings errors raise ConfigError before anything starts.
        """
        if overrides:
            with_overrides(self.settings, **overrides)
        runner.run_until_signalled(
            lambda stop: self.worker(stop=stop, processes=processes, **overrides)
        )


def _raise_if_failed(status: psycopg.pq.TransactionStatus) -> None:
    """InFailedSqlTransaction when a group's transaction failed (a COMMIT would roll it
    back without a word)."""
    if status == psycopg.pq.TransactionStatus.INERROR:
        raise psycopg.errors.InFailedSqlTransaction(
            "a call of the group failed: its transaction is rolled back and none of its jobs"
            " is enqueued"
        )
