"""The executor: runs one claim's handler, whichever way it ends, and settles the claim.

Every ending becomes an outcome for the database, and none escapes: a
return value (complete), an exception of any kind, `SystemExit` and
`KeyboardInterrupt` included (fail, with its traceback and the delay of
the task's retry policy), `Retry` (fail after its delay), `Abort` (fail
for good), `ctx.snooze` (release with its delay: no attempt used), a
timeout (fail), a task this worker does not know (release with a delay:
no attempt burnt), a payload the task's model refuses (fail for good,
before the handler runs: the stored payload cannot change). Only the worker
itself cancels a handler, for a lost claim or at shutdown, and whoever
cancels it settles the claim.

Each claim the control loop takes comes straight here (`start`): the
executor holds it in the ledger and runs its handler. Transactional tasks
run through worker.transactional.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import functools
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from taskboard import tracing
from taskboard.connections import Deadline
from taskboard.context import AsyncContext, BaseContext, SyncContext
from taskboard.settings import Settings
from taskboard.sql import worker as sql_worker
from taskboard.sql.worker import Queries
from taskboard.tasks import PayloadInvalid, Task
from taskboard.worker.endings import Endings, bounded
from taskboard.worker.held import Held, Ledger, State, context_of
from taskboard.worker.outcomes import Complete, Fail, Release, describe
from taskboard.worker.transactional import Transactional

log = logging.getLogger("taskboard.worker")


class Handlers(Protocol):
    """Where claims run: the executor here, or a host's handler processes (worker.host)."""

    @property
    def max_handlers(self) -> int: ...

    @property
    def free_slots(self) -> int: ...

    @property
    def running(self) -> int: ...

    def start_all(
        self, rows: Sequence[sql_worker.Claimed], sent: float, sent_at: dt.datetime | None
    ) -> None: ...


async def read_committed(conn: psycopg.AsyncConnection[Any]) -> None:
    """A handler connection's setup: fenced database effects need READ COMMITTED, whatever
    the role's default."""
    await conn.set_isolation_level(psycopg.IsolationLevel.READ_COMMITTED)


class Executor:
    """Runs handlers for the claims in `ledger`, at most as many as there are slots."""

    def __init__(
        self,
        *,
        tasks: Mapping[str, Task],
        settings: Settings,
        queries: Queries,
        ledger: Ledger,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]],
    ) -> None:
        self.tasks = tasks
        self.settings = settings
        # A worker with a transactional task runs at most as many handlers as it has
        # handler connections, whatever `concurrency` says: each handler can then get one
        # at once, and a transactional job never waits for a connection that plain
        # handlers' still_holder() checks keep busy, its lease running.
        self.max_handlers = (
            min(settings.max_handlers, settings.handler_slots)
            if any(t.transactional for t in tasks.values())
            else settings.max_handlers
        )
        self.queries = queries
        self.ledger = ledger
        self.pool = pool
        self.endings = Endings(queries)
        self.transactional = Transactional(
            queries=queries,
            ledger=ledger,
            pool=pool,
            endings=self.endings,
            deadline=settings.deadline,
        )
        self.running = 0  # handlers occupying a slot
        self._unknown_warned: set[str] = set()

    @property
    def free_slots(self) -> int:
        return self.max_handlers - self.running

    def start(self, row: sql_worker.Claimed, sent: float, sent_at: dt.datetime | None) -> None:
        """Hold a claim the database just handed us (its claim sent at monotonic `sent`,
        wall clock `sent_at`) and run its handler as a task of its own; it occupies a slot
        until it ends."""
        self._start(row, sent, sent_at, tracing.recording())

    def start_all(
        self, rows: Sequence[sql_worker.Claimed], sent: float, sent_at: dt.datetime | None
    ) -> None:
        """start() each of one claim's rows (asking once whether tracing records)."""
        if rows:
            traced = tracing.recording()
            for row in rows:
                self._start(row, sent, sent_at, traced)

    def _start(
        self, row: sql_worker.Claimed, sent: float, sent_at: dt.datetime | None, traced: bool
    ) -> None:
        task = self.tasks.get(row.task)

        async def check() -> bool:
            return await self.still_holder(held)  # this claim's own token, never its job id

        make: Callable[..., BaseContext] = AsyncContext
        if task is not None and not task.is_async:
            make = functools.partial(SyncContext, loop=asyncio.get_running_loop())
        held = Held(
            row,
            task,
            context_of(row, check, make),
            safe_until=sent + self.settings.lease,
            sent_at=sent_at,
        )
        self.ledger.add(held)
        self.running += 1
        # The attempt's span only where a tracer provider would record it.
        run = self._traced(held) if traced else self._run(held)
        held.runner = asyncio.create_task(run, name=f"taskboard-job-{row.job_id}")
        # Counted down when the task is done, however: also when it is cancelled
        # before its first step (a claim lost as soon as it was made).
        held.runner.add_done_callback(self._ended)

    def _ended(self, _: asyncio.Task[None]) -> None:
        self.running -= 1
        self.ledger.wake.set()
        self.ledger.changed.set()

    async def _traced(self, held: Held) -> None:
        claimed = held.claimed
        with tracing.attempt_span(
            job_id=claimed.job_id,
            attempt=claimed.attempt,
            queue=claimed.queue,
            task=claimed.task,
            trace_context=claimed.trace_context,
        ) as span:
            held.span = span
            try:
                await self._run(held)
            finally:
                held.span = None
                self._trace_outcome(span, held)

    async def _run(self, held: Held) -> None:
        try:
            await self._handle(held)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                return  # lost or shut down: whoever cancelled it settles the claim
            self._settle_error(held, "CancelledError raised by the worker's own code")
        except BaseException as exc:
            log.exception(
                "job %s: the worker failed to settle it", held.job_id, extra=held.log_extra
            )
            self._settle_error(held, f"the worker failed to settle the job: {describe(exc)}")
        finally:
            if held.state is State.RUNNING and self.ledger.holds(held):
                # A handler can end no way that leaves its job running and renewed forever.
                self._settle_error(held, "the handler ended without an outcome")

    @staticmethod
    def _trace_outcome(span: Any, held: Held) -> None:
        """Tell the attempt's span how the handler ended (the outcome sent to the database)."""
        outcome = held.outcome
        if outcome is None or held.state in (State.RUNNING, State.LOST):
            tracing.set_outcome(span, "lost")
            return
        tracing.set_outcome(span, outcome.name)
        if isinstance(outcome, Fail):
            tracing.record_failure(span, outcome.error or "failed", held.exception)

    def _settle_error(self, held: Held, error: str) -> None:
        self.ledger.settle(held, Fail(error))

    async def _handle(self, held: Held) -> None:
        task = held.task
        if self.ledger.hooks:
            self.ledger.event(held, "started")
        if held.claimed.payload_error is not None:
            log.warning("job %s: %s", held.job_id, held.claimed.payload_error, extra=held.log_extra)
            self.ledger.settle(held, Fail(held.claimed.payload_error))
            return
        if task is None:
            self._hand_back_unknown(held)
            return
        try:
            held.ctx.payload = task.handler_payload(held.claimed.payload)
        except PayloadInvalid as exc:
            # The stored payload never changes: another attempt would fail the same way.
            error = describe(exc)
            log.warning("job %s: %s", held.job_id, error, extra=held.log_extra)
            self.ledger.settle(held, Fail(error, retry=False))
            return
        if task.transactional:
            await self.transactional.run(held, task)
            return
        try:
            result = await self._run_handler(held, task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            outcome = self.endings.failure(held, asyncio.CancelledError("raised by the handler"))
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a handler fails its job
            outcome = self.endings.failure(held, exc)
        else:
            outcome = Complete(self.endings.result_json(held, result))
        self.ledger.settle(held, outcome)

    def _hand_back_unknown(self, held: Held) -> None:
        name = held.claimed.task
        if name not in self._unknown_warned:
            self._unknown_warned.add(name)
            log.warning(
                "claimed a job of task %r, which this worker does not know: handing such jobs "
                "back for %gs each (no attempt used) until a worker that knows it takes them",
                name,
                self.settings.unknown_task_delay,
                extra=held.log_extra,
            )
        self.ledger.settle(held, Release(self.settings.unknown_task_delay))

    def _run_handler(self, held: Held, task: Task) -> Awaitable[Any]:
        """The handler's run, to await: bounded by the task's timeout when it has one."""
        if task.is_async:
            run = task.handler(held.ctx, held.ctx.payload)
        else:
            run = self._in_thread(task.handler, held)
        return run if task.timeout is None else bounded(run, task.timeout, task.name)

    @staticmethod
    def _in_thread(handler: Callable[..., Any], held: Held) -> asyncio.Future[Any]:
        """Run a sync handler in a daemon thread: one abandoned past its timeout never blocks exit."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def deliver(ok: bool, value: Any) -> None:
            if future.done():
                return  # abandoned: timed out or lost
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

        def body() -> None:
            try:
                value = handler(held.ctx, held.ctx.payload)
            except BaseException as exc:  # noqa: BLE001 - delivered to the loop
                ok, value = False, exc
            else:
                ok = True
            with contextlib.suppress(RuntimeError):  # the loop closed: the worker has exited
                loop.call_soon_threadsafe(deliver, ok, value)

        # The handler sees the caller's context variables (the attempt's span among them).
        context = contextvars.copy_context()
        threading.Thread(
            target=context.run, args=(body,), name=f"taskboard-job-{held.job_id}", daemon=True
        ).start()
        return future

    # -- the holder check ---------------------------------------------------------------

    async def still_holder(self, held: Held) -> bool:
        """lease_state for this claim's own token: True only when it is held with a live lease."""
        if held.ctx.lost or not self.ledger.holds(held):
            return False
        try:
            if held.ctx.conn is not None:
                async with Deadline(held.ctx.conn, self.settings.deadline):
                    state = await self.queries.lease_state(held.ctx.conn, held.job_id, held.token)
            else:
                async with (
                    self.pool.connection() as conn,
                    Deadline(conn, self.settings.deadline),
                    conn.transaction(),
                ):
                    state = await self.queries.lease_state(conn, held.job_id, held.token)
        except (psycopg.OperationalError, PoolTimeout):
            return False
        self.ledger.event(held, "holder_checked", answer=state)
        return state == "held"
