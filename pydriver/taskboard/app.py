"""The application object: task registry, enqueue, and the entry to the worker."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar

import psycopg

from taskboard import metrics, runner, sql, tracing
from taskboard.connections import Deadline
from taskboard.errors import (
    InvalidArgument,
    JobCancelled,
    JobFailed,
    JobNotFound,
    TaskError,
    translate,
)
from taskboard.events import EventHook
from taskboard.periodic import Schedule, parse_cron, schedule
from taskboard.pools import ENQUEUE_POOL_MAX, EnqueuePools
from taskboard.retries import RetryPolicy, retry_policy
from taskboard.settings import (
    Settings,
    load_settings,
    name_problem,
    with_overrides,
)
from taskboard.tasks import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_QUEUE,
    Handler,
    PayloadModel,
    Task,
    payload_model,
)
from taskboard.worker import Worker

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

# The roles whose grant allows enqueue and enqueue_many, and queue control.
PRODUCER_ROLE = "taskboard_producer (PREFIX_producer if installed with another prefix)"
ADMIN_ROLE = "taskboard_admin (PREFIX_admin if installed with another prefix)"
DEFAULT_PAGE = 50  # jobs per page of app.jobs
PRUNE_BATCH = 10_000  # jobs per prune call
# app.result looks at an unfinished job after these pauses, doubling.
RESULT_FIRST_PAUSE = 0.05
RESULT_MAX_PAUSE = 1.0
# The warning about an enqueue of a task this app does not register lists at most this many.
NAMES_LISTED = 10

F = TypeVar("F", bound=Handler)
H = TypeVar("H", bound=EventHook)
R = TypeVar("R")
P = ParamSpec("P")


class Taskboard:
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
        self._settings = settings
        self.tasks: dict[str, Task] = {}
        self.hooks: list[EventHook] = []
        self.schedules: dict[str, Schedule] = {}
        self._pools = EnqueuePools(lambda: self.settings, self.connect_kwargs)
        self._unknown_warned: set[str] = set()  # names warned about (see _registered)
        self._unknown_lock = threading.Lock()
        # The database's Schema, read at the first call (_check_schema).
        self._schema: sql.Schema | None = None

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
            or not 1 <= max_attempts <= sql.INT4_MAX
        ):
            raise TaskError(
                f"task {name!r}: max_attempts must be an integer from 1 to {sql.INT4_MAX}, "
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

    def queue_of(self, task: str, queue: str | None) -> str:
        if queue is not None:
            return queue
        registered = self.tasks.get(task) if isinstance(task, str) else None
        return registered.queue if registered else DEFAULT_QUEUE

    def max_attempts_of(self, task: str, max_attempts: int | None) -> int:
        """`max_attempts` when given, else the task's registered one, else DEFAULT_MAX_ATTEMPTS."""
        if max_attempts is not None:
            return max_attempts
        registered = self.tasks.get(task) if isinstance(task, str) else None
        if registered is not None and registered.max_attempts is not None:
            return registered.max_attempts
        return DEFAULT_MAX_ATTEMPTS

    def on_event(self, hook: H) -> H:
        """Register `hook(event)` for every JobEvent of this app's workers (see taskboard.events).

        Usable as a decorator. Hooks run on the worker's loop and must not block.
        """
        self.hooks.append(hook)
        return hook

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    # -- enqueue -----------------------------------------------------------------

    def enqueue(
        self,
        task: str,
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
        """Enqueue one job and return its id.

        With `conn` (any row factory), the job joins that connection's
        transaction: it commits when the caller commits (at once in
        autocommit) and vanishes if it rolls back; see Taskboard for a
        closed connection or a failed transaction. Without, a connection of
        the app's pool commits it at once (a pool for the sync calls, one per
        event loop for the asyncio ones). With `dedupe_key`, an unfinished
        job of the same queue and task holding that key is returned instead
        of a new one. With `concurrency_key`, the job counts against its
        queue's key limit (`set_key_limit`): no more than that many jobs of
        one key hold a lease at once. With `depends_on` (ids of jobs of any queue, at most 10000),
        the job waits (state waiting) until each of them has ended: it is
        queued by the accepted completion of the last, and cancelled when one
        ends dead or cancelled, unless `on_dependency_failure` is "run" (then
        it runs all the same; "run" without `depends_on` is refused with
        InvalidArgument); not together with `dedupe_key`. An empty `depends_on` names no
        dependency: the job is enqueued as without it. `max_attempts=None` means the task's
        registered max_attempts, else DEFAULT_MAX_ATTEMPTS (5). A task
        registered with a payload model validates `payload` first (see
        `task`).

        A task this app does not register is enqueued all the same (a worker
        of another app may run it); an app that registers tasks logs one
        warning per such name.
        Raises InvalidArgument when the payload or an argument is refused (an
        unknown id in depends_on among them), and PermissionDenied when the
        login lacks taskboard_producer.
        """
        params = sql.enqueue_params(
            task,
            self._payload(task, payload),
            self.queue_of(task, queue),
            run_at,
            priority,
            self.max_attempts_of(task, max_attempts),
            dedupe_key,
            concurrency_key,
            depends_on,
            on_dependency_failure,
        )
        return self._produce("enqueue", sql.enqueue, self._with_trace(params), conn)

    def enqueue_many(
        self,
        task: str,
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
        """Enqueue one job of `task` per payload in one round trip; ids in payload order.

        As `enqueue`: a payload model validates every payload before any is sent.
        `dedupe_keys` and `concurrency_keys`, when given, hold one key (or None)
        per payload.
        """
        params = sql.enqueue_many_params(
            task,
            self._payloads(task, payloads),
            self.queue_of(task, queue),
            run_at,
            priority,
            self.max_attempts_of(task, max_attempts),
            dedupe_keys,
            concurrency_keys,
        )
        return self._produce("enqueue_many", sql.enqueue_many, self._with_trace(params), conn)

    # -- queue control (the admin role) -------------------------------------------

    def pause(self, queue: str, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Pause `queue`: from the next claim on, no worker takes a job from it, until
        `resume`. Its running jobs carry on, renew, complete and fail. True when this call
        paused it, False when it already was. Needs the admin role."""
        return self._produce("pause", sql.pause, sql.queue_params(queue), conn, role=ADMIN_ROLE)

    def resume(self, queue: str, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Resume a paused `queue`; its workers are woken when a job is runnable. True when
        this call resumed it, False when it was not paused. Needs the admin role."""
        return self._produce("resume", sql.resume, sql.queue_params(queue), conn, role=ADMIN_ROLE)

    def set_queue_limit(
        self,
        queue: str,
        max_running: int | None,
        *,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """Never run more than `max_running` jobs of `queue` at once, across all workers
        (None: no limit). Jobs already running over a lowered limit carry on. True when
        this call changed the limit. Needs the admin role; InvalidArgument below 1."""
        params = sql.queue_limit_params(queue, max_running)
        return self._produce("set_queue_limit", sql.set_queue_limit, params, conn, role=ADMIN_ROLE)

    def set_key_limit(
        self,
        queue: str,
        max_running_per_key: int | None,
        *,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """Never let more than `max_running_per_key` jobs of one concurrency key of `queue`
        hold a lease at once, across all workers (None: no key limit). A lease that expired
        counts until its job is reclaimed or finished; jobs of other keys and jobs without a
        key are still claimed. True when this call changed the limit. Needs the admin
        role; InvalidArgument below 1."""
        params = sql.key_limit_params(queue, max_running_per_key)
        return self._produce("set_key_limit", sql.set_key_limit, params, conn, role=ADMIN_ROLE)

    def set_rate_limit(
        self,
        queue: str,
        starts: int | None,
        per: dt.timedelta | float | None,
        *,
        by_key: bool = False,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """From the next claim on, start at most `starts` jobs of `queue` in any window of
        length `per` (a timedelta, or seconds), on the database's clock, across all workers;
        a reclaim of an expired lease counts as a start. With `by_key`, each concurrency key
        gets `starts` per window of its own and jobs without a key are not limited. Jobs held
        back stay queued. `starts=None, per=None` removes the limit and forgets the queue's
        starts. True when this call changed the limit. Needs the admin role;
        InvalidArgument for starts outside 1..100000, or per not positive or longer
        than 31 days."""
        params = sql.rate_limit_params(queue, starts, per, by_key)
        return self._produce("set_rate_limit", sql.set_rate_limit, params, conn, role=ADMIN_ROLE)

    # -- managing jobs -------------------------------------------------------------

    def get_job(
        self, job_id: int, *, conn: psycopg.Connection[Any] | None = None
    ) -> sql.JobInfo | None:
        """The job as a person may see it (never its token); None for an unknown id."""
        return self._produce("get_job", sql.get_job, sql.job_params(job_id), conn)

    def jobs(
        self,
        *,
        queue: str | None = None,
        state: str | None = None,
        task: str | None = None,
        after_id: int | None = None,
        limit: int = DEFAULT_PAGE,
        conn: psycopg.Connection[Any] | None = None,
    ) -> list[sql.JobInfo]:
        """Jobs matching every filter given, newest first, at most `limit` (1..1000).

        The next page: pass the last job's id as `after_id`. Any Taskboard role
        may.
        """
        params = sql.find_jobs_params(queue, state, task, after_id, limit)
        return self._produce("jobs", sql.find_jobs, params, conn)

    def cancel(self, job_id: int, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Cancel a waiting, queued or running job; its holder's later
        writes are refused, and the jobs waiting on it are cancelled too unless they were
        enqueued with on_dependency_failure="run". False for a finished or unknown job.
        Needs the admin role."""
        return self._produce("cancel", sql.cancel, sql.job_params(job_id), conn, role=ADMIN_ROLE)

    def retry(self, job_id: int, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Queue a dead or cancelled job again, its attempts reset: runnable now, or, when
        it was cancelled under a lease that has not run out, once that lease ends. False for
        any other state, an unknown job, or when its dedupe key is held by another unfinished
        job. Needs the admin role."""
        return self._produce("retry", sql.retry, sql.job_params(job_id), conn, role=ADMIN_ROLE)

    def prune(
        self,
        older_than: float | dt.timedelta,
        *,
        batch: int = PRUNE_BATCH,
        conn: psycopg.Connection[Any] | None = None,
    ) -> int:
        """Delete finished jobs that finished more than `older_than` (seconds or a
        timedelta) ago, `batch` at a time until none is left; how many in all. Needs the
        admin (or worker) role."""
        params = sql.prune_params(older_than, batch)
        return self._produce("prune", sql.prune, params, conn, role=ADMIN_ROLE)

    def result(self, job_id: int, *, timeout: float | None = None) -> Any:
        """Wait until the job is finished and return its result.

        Raises JobFailed when it is dead, JobCancelled when it was cancelled,
        JobNotFound for an unknown id, and TimeoutError when it is not
        finished within `timeout` seconds (None: wait as long as it takes).
        Asks get_job, less often the longer it waits (at most every second).
        """
        waiting = _Waiting(timeout)
        while True:
            job = self.get_job(job_id)
            if (done := _outcome(job_id, job)) is not None:
                return done.value
            time.sleep(waiting.next_pause(job_id))

    # -- making the calls ------------------------------------------------------------

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
            sql.check_connection(name, conn, psycopg.Connection)
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
            self._schema = sql.read_schema(conn)

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    # -- enqueue -----------------------------------------------------------------

    async def aenqueue(
        self,
        task: str,
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
        """Enqueue one job and return its id.

        With `conn` (any row factory), the job joins that connection's
        transaction: it commits when the caller commits (at once in
        autocommit) and vanishes if it rolls back; see Taskboard for a
        closed connection or a failed transaction. Without, a connection of
        the app's pool commits it at once (a pool for the sync calls, one per
        event loop for the asyncio ones). With `dedupe_key`, an unfinished
        job of the same queue and task holding that key is returned instead
        of a new one. With `concurrency_key`, the job counts against its
        queue's key limit (`aset_key_limit`): no more than that many jobs of
        one key hold a lease at once. With `depends_on` (ids of jobs of any queue, at most 10000),
        the job waits (state waiting) until each of them has ended: it is
        queued by the accepted completion of the last, and cancelled when one
        ends dead or cancelled, unless `on_dependency_failure` is "run" (then
        it runs all the same; "run" without `depends_on` is refused with
        InvalidArgument); not together with `dedupe_key`. An empty `depends_on` names no
        dependency: the job is enqueued as without it. `max_attempts=None` means the task's
        registered max_attempts, else DEFAULT_MAX_ATTEMPTS (5). A task
        registered with a payload model validates `payload` first (see
        `task`).

        A task this app does not register is enqueued all the same (a worker
        of another app may run it); an app that registers tasks logs one
        warning per such name.
        Raises InvalidArgument when the payload or an argument is refused (an
        unknown id in depends_on among them), and PermissionDenied when the
        login lacks taskboard_producer.
        """
        params = sql.enqueue_params(
            task,
            self._payload(task, payload),
            self.queue_of(task, queue),
            run_at,
            priority,
            self.max_attempts_of(task, max_attempts),
            dedupe_key,
            concurrency_key,
            depends_on,
            on_dependency_failure,
        )
        return await self._aproduce("aenqueue", sql.aenqueue, self._with_trace(params), conn)

    async def aenqueue_many(
        self,
        task: str,
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
        """Enqueue one job of `task` per payload in one round trip; ids in payload order.

        As `aenqueue`: a payload model validates every payload before any is sent.
        `dedupe_keys` and `concurrency_keys`, when given, hold one key (or None)
        per payload.
        """
        params = sql.enqueue_many_params(
            task,
            self._payloads(task, payloads),
            self.queue_of(task, queue),
            run_at,
            priority,
            self.max_attempts_of(task, max_attempts),
            dedupe_keys,
            concurrency_keys,
        )
        return await self._aproduce(
            "aenqueue_many", sql.aenqueue_many, self._with_trace(params), conn
        )

    # -- queue control (the admin role) -------------------------------------------

    async def apause(self, queue: str, *, conn: psycopg.AsyncConnection[Any] | None = None) -> bool:
        """Pause `queue`: from the next claim on, no worker takes a job from it, until
        `aresume`. Its running jobs carry on, renew, complete and fail. True when this call
        paused it, False when it already was. Needs the admin role."""
        return await self._aproduce(
            "apause", sql.apause, sql.queue_params(queue), conn, role=ADMIN_ROLE
        )

    async def aresume(
        self, queue: str, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Resume a paused `queue`; its workers are woken when a job is runnable. True when
        this call resumed it, False when it was not paused. Needs the admin role."""
        return await self._aproduce(
            "aresume", sql.aresume, sql.queue_params(queue), conn, role=ADMIN_ROLE
        )

    async def aset_queue_limit(
        self,
        queue: str,
        max_running: int | None,
        *,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """Never run more than `max_running` jobs of `queue` at once, across all workers
        (None: no limit). Jobs already running over a lowered limit carry on. True when
        this call changed the limit. Needs the admin role; InvalidArgument below 1."""
        params = sql.queue_limit_params(queue, max_running)
        return await self._aproduce(
            "aset_queue_limit", sql.aset_queue_limit, params, conn, role=ADMIN_ROLE
        )

    async def aset_key_limit(
        self,
        queue: str,
        max_running_per_key: int | None,
        *,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """Never let more than `max_running_per_key` jobs of one concurrency key of `queue`
        hold a lease at once, across all workers (None: no key limit). A lease that expired
        counts until its job is reclaimed or finished; jobs of other keys and jobs without a
        key are still claimed. True when this call changed the limit. Needs the admin
        role; InvalidArgument below 1."""
        params = sql.key_limit_params(queue, max_running_per_key)
        return await self._aproduce(
            "aset_key_limit", sql.aset_key_limit, params, conn, role=ADMIN_ROLE
        )

    async def aset_rate_limit(
        self,
        queue: str,
        starts: int | None,
        per: dt.timedelta | float | None,
        *,
        by_key: bool = False,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """From the next claim on, start at most `starts` jobs of `queue` in any window of
        length `per` (a timedelta, or seconds), on the database's clock, across all workers;
        a reclaim of an expired lease counts as a start. With `by_key`, each concurrency key
        gets `starts` per window of its own and jobs without a key are not limited. Jobs held
        back stay queued. `starts=None, per=None` removes the limit and forgets the queue's
        starts. True when this call changed the limit. Needs the admin role;
        InvalidArgument for starts outside 1..100000, or per not positive or longer
        than 31 days."""
        params = sql.rate_limit_params(queue, starts, per, by_key)
        return await self._aproduce(
            "aset_rate_limit", sql.aset_rate_limit, params, conn, role=ADMIN_ROLE
        )

    # -- managing jobs -------------------------------------------------------------

    async def aget_job(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> sql.JobInfo | None:
        """The job as a person may see it (never its token); None for an unknown id."""
        return await self._aproduce("aget_job", sql.aget_job, sql.job_params(job_id), conn)

    async def ajobs(
        self,
        *,
        queue: str | None = None,
        state: str | None = None,
        task: str | None = None,
        after_id: int | None = None,
        limit: int = DEFAULT_PAGE,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> list[sql.JobInfo]:
        """Jobs matching every filter given, newest first, at most `limit` (1..1000).

        The next page: pass the last job's id as `after_id`. Any Taskboard role
        may.
        """
        params = sql.find_jobs_params(queue, state, task, after_id, limit)
        return await self._aproduce("ajobs", sql.afind_jobs, params, conn)

    async def acancel(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Cancel a waiting, queued or running job; its holder's later
        writes are refused, and the jobs waiting on it are cancelled too unless they were
        enqueued with on_dependency_failure="run". False for a finished or unknown job.
        Needs the admin role."""
        return await self._aproduce(
            "acancel", sql.acancel, sql.job_params(job_id), conn, role=ADMIN_ROLE
        )

    async def aretry(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Queue a dead or cancelled job again, its attempts reset: runnable now, or, when
        it was cancelled under a lease that has not run out, once that lease ends. False for
        any other state, an unknown job, or when its dedupe key is held by another unfinished
        job. Needs the admin role."""
        return await self._aproduce(
            "aretry", sql.aretry, sql.job_params(job_id), conn, role=ADMIN_ROLE
        )

    async def aprune(
        self,
        older_than: float | dt.timedelta,
        *,
        batch: int = PRUNE_BATCH,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> int:
        """Delete finished jobs that finished more than `older_than` (seconds or a
        timedelta) ago, `batch` at a time until none is left; how many in all. Needs the
        admin (or worker) role."""
        params = sql.prune_params(older_than, batch)
        return await self._aproduce("aprune", sql.aprune, params, conn, role=ADMIN_ROLE)

    async def aresult(self, job_id: int, *, timeout: float | None = None) -> Any:
        """Wait until the job is finished and return its result.

        Raises JobFailed when it is dead, JobCancelled when it was cancelled,
        JobNotFound for an unknown id, and TimeoutError when it is not
        finished within `timeout` seconds (None: wait as long as it takes).
        Asks aget_job, less often the longer it waits (at most every second).
        """
        waiting = _Waiting(timeout)
        while True:
            job = await self.aget_job(job_id)
            if (done := _outcome(job_id, job)) is not None:
                return done.value
            await asyncio.sleep(waiting.next_pause(job_id))

    # -- making the calls ------------------------------------------------------------

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
            sql.check_connection(name, conn, psycopg.AsyncConnection)
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
            self._schema = await sql.aread_schema(conn)

    # -- end of the asyncio calls

    def _payload(self, task: str, payload: Any) -> Any:
        """`payload` as a job of `task` stores it (see Task.stored_payload)."""
        registered = self._registered(task)
        return payload if registered is None else registered.stored_payload(payload)

    def _payloads(self, task: str, payloads: Iterable[Any]) -> Iterable[Any]:
        registered = self._registered(task)
        if registered is None or registered.payload_model is None:
            return payloads
        return [
            registered.stored_payload(p, f"payloads[{i}]")
            for i, p in enumerate(sql.sequence("payloads", payloads))
        ]

    def _registered(self, task: str) -> Task | None:
        """The task registered as `task`; None, with a warning once per name, when this app
        registers other tasks but not it (an app that registers none is a producer)."""
        if not isinstance(task, str):
            return None  # refused by sql.text, naming the argument
        registered = self.tasks.get(task)
        if registered is not None or not self.tasks:
            return registered
        with self._unknown_lock:
            if task in self._unknown_warned:
                return None
            self._unknown_warned.add(task)
        names = sorted(self.tasks)
        listed = ", ".join(names[:NAMES_LISTED])
        if len(names) > NAMES_LISTED:
            listed += f", and {len(names) - NAMES_LISTED} more"
        log.warning(
            "enqueue of task %r, which this app does not register (registered: %s): "
            "it runs only on a worker that does",
            task,
            listed,
        )
        return None

    @staticmethod
    def _with_trace(params: dict[str, Any]) -> dict[str, Any]:
        """`params` with the caller's trace context (taskboard.tracing), when there is one."""
        return {**params, "trace_context": sql.trace_context_json(tracing.current_context())}

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
        queries: sql.Queries | None = None,
        **overrides: Any,
    ) -> None:
        """Run a worker until `stop` is set (then shut down gracefully).

        `overrides` replace settings for this worker (e.g. queues, pool_size).
        `queries` makes its SQL calls (a subclass may observe or delay them).
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

    def run_worker(self, **overrides: Any) -> None:
        """Run a worker in a new event loop until SIGTERM or SIGINT (see `taskboard.runner`).

        Settings errors raise ConfigError before anything starts.
        """
        if overrides:
            with_overrides(self.settings, **overrides)
        runner.run_until_signalled(lambda stop: self.worker(stop=stop, **overrides))


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

    def __init__(self, app: Taskboard, task: Task) -> None:
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


class Group:
    """Jobs enqueued in one transaction, as `Taskboard.group` gives them.

    `enqueue` and `enqueue_many` take a task's name or its TaskHandle and
    the options of Taskboard.enqueue and enqueue_many but `conn`; any other
    call given `conn=group.conn` (a task handle's enqueue, app.cancel, your
    own SQL) joins the same transaction.
    """

    def __init__(self, app: Taskboard, conn: psycopg.Connection[Any]) -> None:
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


class AsyncGroup:
    """Jobs enqueued in one transaction, as `Taskboard.agroup` gives them: Group for
    asyncio, with `aenqueue` and `aenqueue_many`, and `conn` a psycopg.AsyncConnection."""

    def __init__(self, app: Taskboard, conn: psycopg.AsyncConnection[Any]) -> None:
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


def _raise_if_failed(status: psycopg.pq.TransactionStatus) -> None:
    """InFailedSqlTransaction when a group's transaction failed (a COMMIT would roll it
    back without a word)."""
    if status == psycopg.pq.TransactionStatus.INERROR:
        raise psycopg.errors.InFailedSqlTransaction(
            "a call of the group failed: its transaction is rolled back and none of its jobs"
            " is enqueued"
        )


@dataclass(frozen=True, slots=True)
class _Done:
    value: Any


def _outcome(job_id: int, job: sql.JobInfo | None) -> _Done | None:
    """The result of a succeeded job; None while it is unfinished; raises for the rest."""
    if job is None:
        raise JobNotFound(job_id)
    if job.state == "succeeded":
        return _Done(job.result)
    if job.state == "dead":
        raise JobFailed(job_id, job.errors)
    if job.state == "cancelled":
        raise JobCancelled(job_id)
    return None


class _Waiting:
    """The pauses between looks at an unfinished job, and the deadline."""

    def __init__(self, timeout: float | None) -> None:
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout >= 0):
            raise ValueError(f"timeout must be None or seconds >= 0, got {timeout!r}")
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.pause = RESULT_FIRST_PAUSE

    def next_pause(self, job_id: int) -> float:
        pause, self.pause = self.pause, min(self.pause * 2, RESULT_MAX_PAUSE)
        if self.deadline is None:
            return pause
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"job {job_id} did not finish in time")
        return min(pause, left)
