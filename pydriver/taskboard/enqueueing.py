"""Enqueueing: an app's enqueue and enqueue_many, and their asyncio twins."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterable
from typing import Any

import psycopg

from taskboard import tracing
from taskboard.calls import Calls
from taskboard.settings import Settings
from taskboard.sql import parameters, producer, producer_async
from taskboard.tasks import DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, Task

__all__ = ["Enqueueing"]

log = logging.getLogger("taskboard.app")

# The warning about an enqueue of a task this app does not register lists at most this many.
NAMES_LISTED = 10


class Enqueueing(Calls):
    """The enqueue calls of an app, and the tasks whose defaults and payload models they use."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self.tasks: dict[str, Task] = {}
        self._unknown_warned: set[str] = set()  # names warned about (see _registered)
        self._unknown_lock = threading.Lock()

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

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

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
        params = parameters.enqueue_params(
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
        return self._produce("enqueue", producer.enqueue, self._with_trace(params), conn)

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
        params = parameters.enqueue_many_params(
            task,
            self._payloads(task, payloads),
            self.queue_of(task, queue),
            run_at,
            priority,
            self.max_attempts_of(task, max_attempts),
            dedupe_keys,
            concurrency_keys,
        )
        return self._produce("enqueue_many", producer.enqueue_many, self._with_trace(params), conn)

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

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
        params = parameters.enqueue_params(
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
        return await self._aproduce(
            "aenqueue", producer_async.aenqueue, self._with_trace(params), conn
        )

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
        params = parameters.enqueue_many_params(
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
            "aenqueue_many", producer_async.aenqueue_many, self._with_trace(params), conn
        )

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
            for i, p in enumerate(parameters.sequence("payloads", payloads))
        ]

    def _registered(self, task: str) -> Task | None:
        """The task registered as `task`; None, with a warning once per name, when this app
        registers other tasks but not it (an app that registers none is a producer)."""
        if not isinstance(task, str):
            return None  # refused by parameters.text, naming the argument
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
        return {**params, "trace_context": parameters.trace_context_json(tracing.current_context())}
