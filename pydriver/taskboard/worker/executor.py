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

Transactional tasks settle here too: `complete` runs on the handler's own
connection, inside its transaction, and COMMIT follows only when it
answered true.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg import pq
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from taskboard import sql, tracing
from taskboard.errors import TaskError
from taskboard.retries import Abort, Retry, Snooze, delay_seconds
from taskboard.settings import Settings
from taskboard.sql import Queries
from taskboard.tasks import PayloadInvalid, Task
from taskboard.worker.held import Held, Ledger, Outcome, State
from taskboard.worker.outcomes import (
    ResultNotStored,
    describe,
    encode_result,
    format_traceback,
    not_stored,
)
from taskboard.worker.retry import Backoff, connection_lost

log = logging.getLogger("taskboard.worker")

READ_COMMITTED = "read committed"


class HandlerTimeout(TaskError):
    """A handler ran past its task's timeout."""


class FenceEscaped(TaskError):
    """A transactional handler committed or rolled back `ctx.conn` itself."""


async def bounded(awaitable: Awaitable[Any], timeout: float | None, task: str) -> Any:
    """Await `awaitable`, cancelling it after `timeout` seconds with HandlerTimeout.

    A TimeoutError the handler raises itself stays what it is.
    """
    if timeout is None:
        return await awaitable
    try:
        async with asyncio.timeout(timeout) as scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise HandlerTimeout(f"task {task!r} ran past its timeout of {timeout:g}s") from None
        raise


class Executor:
    """Runs handlers for the claims in `ledger`, at most as many as there are slots."""

    def __init__(
        self,
        *,
        settings: Settings,
        queries: Queries,
        ledger: Ledger,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]],
        transactional_tasks: bool = True,
    ) -> None:
        self.settings = settings
        # A worker with a transactional task runs at most as many handlers as it has
        # handler connections, whatever `concurrency` says: each handler can then get one
        # at once, and a transactional job never waits for a connection that plain
        # handlers' still_holder() checks keep busy, its lease running.
        self.max_handlers = (
            min(settings.max_handlers, settings.handler_slots)
            if transactional_tasks
            else settings.max_handlers
        )
        self.queries = queries
        self.ledger = ledger
        self.pool = pool
        self.running = 0  # handlers occupying a slot
        self._unknown_warned: set[str] = set()
        self._abort_warned = False

    @property
    def free_slots(self) -> int:
        return self.max_handlers - self.running

    def start(self, held: Held) -> None:
        """Run the claim's handler as a task of its own; it occupies a slot until it ends."""
        self.running += 1
        held.runner = asyncio.create_task(self._run(held), name=f"taskboard-job-{held.job_id}")
        # Counted down when the task is done, however: also when it is cancelled
        # before its first step (a claim lost as soon as it was made).
        held.runner.add_done_callback(self._ended)

    def _ended(self, _: asyncio.Task[None]) -> None:
        self.running -= 1
        self.ledger.wake.set()
        self.ledger.changed.set()

    async def _run(self, held: Held) -> None:
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
                await self._run_traced(held)
            finally:
                held.span = None
                self._trace_outcome(span, held)

    async def _run_traced(self, held: Held) -> None:
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
        if held.state in (State.RUNNING, State.LOST):
            tracing.set_outcome(span, "lost")
            return
        # No outcome: a transactional handler's complete, sent inside its transaction.
        tracing.set_outcome(span, "complete" if outcome is None else outcome.kind)
        if outcome is None:
            return
        if outcome.kind == "fail":
            tracing.record_failure(span, outcome.value or "failed", held.exception)

    def _settle_error(self, held: Held, error: str) -> None:
        self.ledger.settle(held, Outcome("fail", error))

    async def _handle(self, held: Held) -> None:
        task = held.task
        self.ledger.event(held, "started")
        if held.claimed.payload_error is not None:
            log.warning("job %s: %s", held.job_id, held.claimed.payload_error, extra=held.log_extra)
            self.ledger.settle(held, Outcome("fail", held.claimed.payload_error))
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
            self.ledger.settle(held, Outcome("fail", error, retry=False))
            return
        if task.transactional:
            await self._run_transactional(held, task)
            return
        try:
            result = await self._run_handler(held, task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            outcome = self._failure(held, asyncio.CancelledError("raised by the handler"))
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a handler fails its job
            outcome = self._failure(held, exc)
        else:
            outcome = Outcome("complete", self._result_json(held, result))
        self.ledger.settle(held, outcome)

    def _failure(self, held: Held, exc: BaseException) -> Outcome:
        """The outcome of a handler that raised `exc`.

        Snooze hands the job back (no attempt used); Abort fails it for good
        (on a schema older than 0.3.0, as any error); Retry fails the attempt
        with its own delay, else the task's policy's; any other exception
        fails the attempt with the policy's delay (None: the database's).
        Every failure but a timeout carries the traceback.
        """
        if not isinstance(exc, Snooze):
            held.exception = exc
        if isinstance(exc, Snooze):
            log.info("job %s snoozed for %gs", held.job_id, exc.seconds, extra=held.log_extra)
            return Outcome("release", delay=exc.seconds)
        if isinstance(exc, HandlerTimeout):
            held.ctx.mark_lost()  # tells an abandoned sync handler its outcome no longer counts
            log.warning("job %s: %s", held.job_id, describe(exc), extra=held.log_extra)
            return Outcome(
                "fail",
                f"TimeoutError: {describe(exc).split(': ', 1)[-1]}",
                delay=self._policy_delay(held, exc),
            )
        error, traceback = describe(exc), format_traceback(exc)
        if isinstance(exc, Retry):
            log.info("job %s: %s", held.job_id, error, extra=held.log_extra)
            delay = exc.after if exc.after is not None else self._policy_delay(held, exc)
            return Outcome("fail", error, delay=delay, traceback=traceback)
        log.warning("job %s failed", held.job_id, exc_info=exc, extra=held.log_extra)
        if isinstance(exc, Abort):
            if not self.queries.fail_takes_retry and not self._abort_warned:
                self._abort_warned = True
                log.warning(
                    "the database's taskboard schema is older than 0.3.0: Abort fails the "
                    "attempt as any error does, and the job is retried while it has attempts "
                    "left (run `taskboard migrate` to make it dead at once)",
                    extra=held.log_extra,
                )
            return Outcome("fail", error, retry=False, traceback=traceback)
        return Outcome("fail", error, delay=self._policy_delay(held, exc), traceback=traceback)

    def _policy_delay(self, held: Held, exc: BaseException) -> float | None:
        """The task's retry policy's delay after this attempt; None for the database's backoff.

        A policy that raises or answers what fail cannot take is logged, and
        the database's backoff applies.
        """
        policy = held.task.retry if held.task is not None else None
        if policy is None:
            return None
        try:
            delay = policy(held.claimed.attempt, exc)
            if delay is None:
                return None
            return delay_seconds("the delay", delay, zero_allowed=False)
        except BaseException as problem:  # noqa: BLE001 - a policy must not lose the outcome
            # nor stop the worker, whatever it raises (SystemExit included).
            log.warning(
                "job %s: the retry policy of task %r failed (%s); the database's backoff applies",
                held.job_id,
                held.claimed.task,
                describe(problem),
                extra=held.log_extra,
            )
            return None

    def _result_json(self, held: Held, result: Any) -> str | None:
        try:
            return encode_result(result)
        except ResultNotStored as exc:
            log.warning(
                "job %s succeeded but its result is not stored: %s",
                held.job_id,
                exc,
                extra=held.log_extra,
            )
            return not_stored(str(exc))

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
        self.ledger.settle(held, Outcome("release", delay=self.settings.unknown_task_delay))

    async def _run_handler(self, held: Held, task: Task) -> Any:
        if task.is_async:
            coro = task.handler(held.ctx, held.ctx.payload)
            return await bounded(coro, task.timeout, task.name)
        return await bounded(self._in_thread(task.handler, held), task.timeout, task.name)

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

    # -- transactional tasks ---------------------------------------------------------

    async def _run_transactional(self, held: Held, task: Task) -> None:
        """Run the handler in a transaction that commits only with the job's completion."""
        broken_commit: BaseException | None = None
        async with self.pool.connection() as conn:
            held.ctx.conn = conn
            try:
                committed = await self._complete_in_transaction(held, task, conn)
            except psycopg.Error as exc:
                if held.state is State.SETTLING and held.in_flight and connection_lost(exc, conn):
                    broken_commit = exc  # COMMIT or complete broke off: resolved below
                else:
                    self._fail_transactional(held, exc)
                committed = False
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
                self._fail_transactional(held, asyncio.CancelledError("raised by the handler"))
                committed = False
            except BaseException as exc:  # noqa: BLE001 - any ending of a handler fails its job
                self._fail_transactional(held, exc)
                committed = False
            finally:
                held.ctx.conn = None
                if not conn.closed and conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):
                        await conn.rollback()
            if committed:
                held.in_flight = False
                self.ledger.resolve(held, State.COMPLETED, True)
        if broken_commit is not None:
            # Asked on another connection once the broken one went back to the pool.
            await self._resolve_broken_commit(held, broken_commit)

    def _fail_transactional(self, held: Held, exc: BaseException) -> None:
        held.in_flight = False
        if held.state is State.SETTLING:
            # complete or COMMIT raised: nothing committed; the attempt failed.
            held.outcome = Outcome("fail", describe(exc), delay=self._policy_delay(held, exc))
            held.exception = exc
            log.warning("job %s failed", held.job_id, exc_info=exc, extra=held.log_extra)
            self.ledger.wake.set()
            return
        self.ledger.settle(held, self._failure(held, exc))

    async def _complete_in_transaction(
        self, held: Held, task: Task, conn: psycopg.AsyncConnection[Any]
    ) -> bool:
        """Run the handler and call complete on its connection; True once it committed."""
        isolation = await sql.transaction_isolation(conn)
        if isolation != READ_COMMITTED:
            raise TaskError(
                f"transactional task {task.name!r} must run in READ COMMITTED, not {isolation}"
            )
        xid = await sql.transaction_id(conn)
        coro = task.handler(held.ctx, held.ctx.payload)
        result = await bounded(coro, task.timeout, task.name)
        # From here the database's answer decides: the watchdog leaves the claim alone.
        if not self.ledger.settle(held, None):
            await conn.rollback()
            return False
        held.in_flight = True
        result_json = self._result_json(held, result)
        if await self._transaction_changed(conn, xid):
            raise FenceEscaped(
                f"transactional task {task.name!r} committed or rolled back ctx.conn itself: "
                "its writes were not fenced by the job's completion"
            )
        self.ledger.sending(held, "complete")
        if not await self.queries.complete(conn, held.job_id, held.token, result_json):
            await conn.rollback()
            held.in_flight = False
            self.ledger.resolve(held, State.LOST, False)
            return False
        await conn.commit()
        return True

    @staticmethod
    async def _transaction_changed(conn: psycopg.AsyncConnection[Any], xid: int) -> bool:
        """True when the transaction the handler was given is no longer the open one."""
        if conn.info.transaction_status != pq.TransactionStatus.INTRANS:
            return True
        return await sql.transaction_id_if_assigned(conn) != xid

    async def _resolve_broken_commit(self, held: Held, exc: BaseException) -> None:
        """COMMIT broke off: learn from lease_state whether it happened; never complete again."""
        log.warning(
            "job %s: connection lost during COMMIT (%s)",
            held.job_id,
            describe(exc),
            extra=held.log_extra,
        )
        backoff = Backoff()
        while True:
            try:
                async with self.pool.connection() as other, other.transaction():
                    state = await self.queries.lease_state(other, held.job_id, held.token)
                break
            except (psycopg.Error, PoolTimeout):
                if time.monotonic() >= held.safe_until:
                    held.in_flight = False
                    self.ledger.lose(
                        held,
                        "whether its COMMIT happened could not be learnt in time",
                        settling_too=True,
                    )
                    return
                await asyncio.sleep(backoff.next())
        held.in_flight = False
        if state == "completed":
            self.ledger.resolve(held, State.COMPLETED, True)
            return
        log.warning(
            "job %s: its COMMIT did not happen (lease_state %s)",
            held.job_id,
            state,
            extra=held.log_extra,
        )
        held.outcome = Outcome("fail", f"{describe(exc)} (during COMMIT, which did not happen)")
        self.ledger.wake.set()

    # -- the holder check ---------------------------------------------------------------

    async def still_holder(self, held: Held) -> bool:
        """lease_state for this claim's own token: True only when it is held with a live lease."""
        if held.ctx.lost or not self.ledger.holds(held):
            return False
        try:
            if held.ctx.conn is not None:
                state = await self.queries.lease_state(held.ctx.conn, held.job_id, held.token)
            else:
                async with self.pool.connection() as conn, conn.transaction():
                    state = await self.queries.lease_state(conn, held.job_id, held.token)
        except (psycopg.OperationalError, PoolTimeout):
            return False
        self.ledger.event(held, "holder_checked", answer=state)
        return state == "held"
