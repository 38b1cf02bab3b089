"""The worker: claim loop, handlers, lease renewal, settlement and shutdown.

Connections: exactly `pool_size`. Two are the worker's own, outside any
pool, and reconnect by themselves: *renewal* (one renew_many for every held
job, every renew_every) and *control* (LISTEN, claim, and the batched
complete/fail/release of ordinary jobs). The other `pool_size - 2` form the
handler pool. At most `pool_size - 2` handlers run at once and a claim asks
for no more jobs than there are free slots, so a handler can always get a
pool connection and renewal never waits behind handlers.

Every decision about who holds a job is the database's: the worker only
reports what the SQL functions answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import pq
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from taskboard import sql
from taskboard.app import CONNECT_TIMEOUT_SECONDS
from taskboard.context import AsyncContext, BaseContext, SyncContext
from taskboard.errors import SchemaVersionError, TaskError
from taskboard.settings import Settings

if TYPE_CHECKING:
    from taskboard.app import Task, Taskboard

log = logging.getLogger(__name__)

SUPPORTED_SCHEMA_VERSIONS = frozenset({"0.1.0"})
RECONNECT_FIRST_SECONDS = 0.1
RECONNECT_MAX_SECONDS = 5.0
WATCHDOG_MAX_SLEEP_SECONDS = 0.5
SETTLE_AT_EXIT_SECONDS = 10.0  # how long shutdown waits for the last complete/fail/release
READ_COMMITTED = "read committed"


class Backoff:
    """Capped exponential delays for reconnecting: 0.1 s, 0.2 s, ... up to 5 s."""

    def __init__(self) -> None:
        self._next = RECONNECT_FIRST_SECONDS

    def reset(self) -> None:
        self._next = RECONNECT_FIRST_SECONDS

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, RECONNECT_MAX_SECONDS)
        return delay


@dataclass
class Counters:
    """What this worker did, as the database answered it."""

    claimed: int = 0
    succeeded: int = 0
    failed: int = 0  # failed attempts queued again
    dead: int = 0  # failed attempts with none left
    lost: int = 0  # given up: renewal refused or the lease could have expired
    stale: int = 0  # complete/fail refused: the token was no longer current
    released: int = 0

    def line(self) -> str:
        return " ".join(f"{k}={v}" for k, v in vars(self).items())


@dataclass(eq=False)
class Held:
    """A job this worker holds, from its claim until its outcome is settled."""

    claimed: sql.Claimed
    task: Task | None
    ctx: BaseContext
    safe_until: float  # monotonic: the lease cannot have expired before this
    runner: asyncio.Task[None] | None = None
    # The handler is done and its fenced complete or fail is queued or in
    # flight: that answer decides the outcome, so renewal and the watchdog
    # leave the job alone. (Giving it up would drop a finished job's
    # completion and run it again for nothing; a stale one is refused anyway.)
    settling: bool = False

    @property
    def job_id(self) -> int:
        return self.claimed.job_id

    @property
    def log_extra(self) -> dict[str, Any]:
        return {"job_id": self.claimed.job_id, "attempt": self.claimed.attempt}


@dataclass(eq=False)
class Outcome:
    """What the control connection must tell the database about a held job."""

    held: Held
    kind: str  # "complete", "fail" or "release"
    value: str | None = None  # result JSON for complete, error text for fail


class ResultError(TaskError):
    """A handler returned something that jsonb cannot store."""


class HandlerTimeout(TaskError):
    """A handler ran past its task's timeout."""


# \u0000 in JSON text, not preceded by an escaped backslash.
ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def encode_result(result: Any) -> str | None:
    """The result as JSON text that jsonb accepts; raises ResultError otherwise."""
    if result is None:
        return None
    try:
        text = json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ResultError(f"the handler's result is not JSON-serialisable: {exc}") from None
    if ESCAPED_NUL.search(text):
        raise ResultError("the handler's result holds a NUL character, which jsonb cannot store")
    return text


def describe(exc: BaseException) -> str:
    """`ExcType: first line of the message`, without NUL bytes (text columns refuse them)."""
    message = str(exc).replace("\x00", "\\0").strip()
    text = message.splitlines()[0] if message else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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


def connection_lost(exc: BaseException, conn: psycopg.AsyncConnection[Any]) -> bool:
    """True when `exc` means the connection itself failed, not the statement."""
    return isinstance(exc, psycopg.OperationalError) and (
        conn.broken or conn.closed or getattr(exc, "sqlstate", None) is None
    )


class Worker:
    """One worker process's claim loop; `run()` until stopped."""

    def __init__(self, app: Taskboard, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.queues = app.worker_queues()
        self.slots = settings.handler_slots
        self.counts = Counters()
        self._held: dict[int, Held] = {}
        self._running = 0  # handlers occupying a slot
        self._outbox: list[Outcome] = []
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()  # stop claiming
        self._finished = asyncio.Event()  # everything settled: side tasks end
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] | None = None
        self._changed = asyncio.Event()  # a handler ended or a held job was settled or lost
        self._next_queue = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ---------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Work until `stop` is set, then shut down gracefully.

        Raises SchemaVersionError when the database's schema is missing or
        unsupported, and re-raises the error of a side task that died.
        """
        self._loop = asyncio.get_running_loop()
        await self._check_version()
        stop = stop or asyncio.Event()
        self._pool = AsyncConnectionPool(
            self.settings.database_url,
            min_size=self.slots,
            max_size=self.slots,
            kwargs=self._connect_kwargs(autocommit=False),
            configure=self._configure_handler_connection,
            # After a restart or failover, idle connections are dead: test each
            # before handing it to a handler rather than failing its attempt.
            check=AsyncConnectionPool.check_connection,
            open=False,
            name="taskboard-handlers",
        )
        await self._pool.open(wait=True)
        log.info(
            "worker %s started: queues=%s slots=%d lease=%gs renew_every=%gs",
            self.settings.worker_name,
            ",".join(self.queues),
            self.slots,
            self.settings.lease,
            self.settings.renew_interval,
        )
        side = [
            asyncio.create_task(self._control(), name="taskboard-control"),
            asyncio.create_task(self._renewal(), name="taskboard-renewal"),
            asyncio.create_task(self._watchdog(), name="taskboard-watchdog"),
            asyncio.create_task(self._report(), name="taskboard-stats"),
        ]
        stopper = asyncio.create_task(stop.wait(), name="taskboard-stop")
        try:
            done, _ = await asyncio.wait([stopper, *side], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not stopper:
                    # A side task never ends by itself while the worker runs.
                    exc = task.exception()
                    raise RuntimeError(f"{task.get_name()} stopped unexpectedly") from exc
            await self._shutdown(side)
        finally:
            stopper.cancel()
            self._finished.set()
            for task in side:
                task.cancel()
            await asyncio.gather(*side, return_exceptions=True)
            await self._pool.close()
            log.info("worker %s stopped: %s", self.settings.worker_name, self.counts.line())

    async def _shutdown(self, side: list[asyncio.Task[None]]) -> None:
        """Stop claiming, let handlers finish within the grace, release the rest."""
        self._stopping.set()
        self._wake.set()
        log.info(
            "worker %s stopping: waiting up to %gs for %d handler(s)",
            self.settings.worker_name,
            self.settings.shutdown_grace,
            self._running,
        )
        deadline = time.monotonic() + self.settings.shutdown_grace
        while self._running and time.monotonic() < deadline:
            await self._sleep_until_change(deadline - time.monotonic(), side)
        for held in list(self._held.values()):
            if held.runner is not None and not held.runner.done():
                held.ctx.mark_lost()  # its outcome no longer counts
                held.runner.cancel()
                self._settle(Outcome(held, "release"), force=True)
        deadline = time.monotonic() + SETTLE_AT_EXIT_SECONDS
        while self._held and time.monotonic() < deadline:
            self._wake.set()
            await self._sleep_until_change(deadline - time.monotonic(), side)
        if self._held:
            log.warning(
                "worker %s exits holding %d job(s) it could not settle; their leases will expire",
                self.settings.worker_name,
                len(self._held),
            )

    async def _sleep_until_change(self, timeout: float, side: list[asyncio.Task[None]]) -> None:
        changed = asyncio.create_task(self._changed.wait())
        done, _ = await asyncio.wait(
            [changed, *side], timeout=max(timeout, 0), return_when=asyncio.FIRST_COMPLETED
        )
        changed.cancel()
        self._changed.clear()
        for task in done:
            if task is not changed:
                raise RuntimeError(f"{task.get_name()} stopped unexpectedly") from task.exception()

    async def _check_version(self) -> None:
        async with await self._connect(self.settings.database_url) as conn:
            version = await sql.aversion(conn)
        if version is None:
            raise SchemaVersionError(
                "the database has no taskboard schema: run `taskboard migrate` first"
            )
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            raise SchemaVersionError(
                f"the database's taskboard schema is version {version}; this driver supports "
                f"{', '.join(sorted(SUPPORTED_SCHEMA_VERSIONS))}"
            )

    def _connect_kwargs(self, *, autocommit: bool) -> dict[str, Any]:
        return {
            "autocommit": autocommit,
            "prepare_threshold": self.settings.prepare_threshold,
            "connect_timeout": CONNECT_TIMEOUT_SECONDS,
            "application_name": f"taskboard {self.settings.worker_name}"[:63],
        }

    async def _connect(self, url: str) -> psycopg.AsyncConnection[Any]:
        return await psycopg.AsyncConnection.connect(url, **self._connect_kwargs(autocommit=True))

    @staticmethod
    async def _configure_handler_connection(conn: psycopg.AsyncConnection[Any]) -> None:
        # Fenced database effects need READ COMMITTED, whatever the role's default.
        await conn.set_isolation_level(psycopg.IsolationLevel.READ_COMMITTED)

    # -- control: claim and settle -----------------------------------------------

    async def _control(self) -> None:
        listen_url = self.settings.listen_target
        listen_here = listen_url == self.settings.database_url
        listener = None
        if listen_url is not None and not listen_here:
            listener = asyncio.create_task(self._listen_elsewhere(listen_url), name="taskboard-listen")
        backoff = Backoff()
        failing = False
        try:
            while not self._finished.is_set():
                try:
                    async with await self._connect(self.settings.database_url) as conn:
                        if listen_here:
                            await sql.listen(conn)
                        if failing:
                            log.info("control connection back: claiming at once")
                        failing = False
                        backoff.reset()
                        await self._control_session(conn, listen_here)
                except psycopg.OperationalError as exc:
                    failing = True
                    delay = backoff.next()
                    log.warning("control connection failed (%s); retrying in %.1fs", describe(exc), delay)
                    await self._sleep_unless_finished(delay)
        finally:
            if listener is not None:
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)

    async def _control_session(self, conn: psycopg.AsyncConnection[Any], listening: bool) -> None:
        while not self._finished.is_set():
            self._wake.clear()
            order = [] if self._stopping.is_set() else self._claim_order()
            # The first queue's claim rides with the completions when there are any.
            claimed = await self._flush(conn, order[0] if order else None)
            for queue in order[1:] if claimed else order:
                await self._claim(conn, queue)
            await self._idle(conn if listening else None)

    def _claim_order(self) -> list[str]:
        """The queues to claim from, starting at a different one each time (no starving)."""
        order = self.queues[self._next_queue :] + self.queues[: self._next_queue]
        self._next_queue = (self._next_queue + 1) % len(self.queues)
        return order

    def _claim_args(self, queue: str) -> tuple[str, str, int, float] | None:
        """claim's arguments for as many jobs as there are free handler slots.

        None when every slot is taken, or once shutdown began (it may begin
        while the control loop waits on the database).
        """
        free = self.slots - self._running
        if free <= 0 or self._stopping.is_set():
            return None
        return (queue, self.settings.worker_name, free, self.settings.lease)

    async def _claim(self, conn: psycopg.AsyncConnection[Any], queue: str) -> None:
        args = self._claim_args(queue)
        if args is None:
            return
        sent = time.monotonic()
        for row in await sql.claim(conn, *args):
            self._start(row, sent)

    async def _idle(self, listener: psycopg.AsyncConnection[Any] | None) -> None:
        """Wait for a wake-up, a notification for one of our queues, or the poll interval."""
        waiters: list[asyncio.Task[Any]] = [asyncio.create_task(self._wake.wait())]
        if listener is not None and self.slots - self._running > 0:
            waiters.append(asyncio.create_task(self._notified(listener)))
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=self.settings.poll_interval, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
        for waiter in done:
            waiter.result()  # a broken connection surfaces here

    async def _notified(self, conn: psycopg.AsyncConnection[Any]) -> None:
        async for note in conn.notifies():
            if note.payload in self.queues:
                return

    async def _listen_elsewhere(self, url: str) -> None:
        """LISTEN on a direct connection (database_url goes through a transaction pooler)."""
        backoff = Backoff()
        while not self._finished.is_set():
            try:
                async with await self._connect(url) as conn:
                    await sql.listen(conn)
                    backoff.reset()
                    self._wake.set()  # claim at once after (re)connecting
                    while True:
                        await self._notified(conn)
                        self._wake.set()
            except psycopg.OperationalError as exc:
                delay = backoff.next()
                log.warning("listen connection failed (%s); retrying in %.1fs", describe(exc), delay)
                await self._sleep_unless_finished(delay)

    async def _flush(self, conn: psycopg.AsyncConnection[Any], claim_from: str | None = None) -> bool:
        """Tell the database every settled outcome: completions in one complete_many.

        With `claim_from`, the claim for the free slots goes in the same
        round trip as the completions, when there are completions and free
        slots; returns whether it did (else the caller claims by itself).

        An outcome leaves the outbox only once its answer is in, so a broken
        connection sends it again after reconnecting (complete is idempotent
        for its token).
        """
        for item in [o for o in self._outbox if o.held.ctx.lost and o.kind != "release"]:
            self._outbox.remove(item)  # lost: never complete or fail it
            self._forget(item.held)
        claimed = False
        completions = [o for o in self._outbox if o.kind == "complete"]
        if completions:
            claim_args = None if claim_from is None else self._claim_args(claim_from)
            try:
                sent = time.monotonic()
                answers, rows = await self._complete_many(conn, completions, claim_args)
                claimed = claim_args is not None
                for row in rows:
                    self._start(row, sent)
            except psycopg.Error as exc:
                if connection_lost(exc, conn):
                    raise
                # One result the database refuses (say, text jsonb cannot
                # hold) must not sink the batch: settle them one by one.
                # A claim sent with them was not made.
                answers = [await self._complete_one(conn, item) for item in completions]
            for item, completed in zip(completions, answers, strict=True):
                if completed is None:
                    continue  # turned into a fail outcome
                self._outbox.remove(item)
                self._forget(item.held)
                if completed:
                    self.counts.succeeded += 1
                else:
                    self._refused(item.held, "complete")
        for item in [o for o in self._outbox if o.kind == "fail"]:
            try:
                state = await sql.fail(conn, item.held.job_id, item.held.claimed.token, item.value or "")
            except psycopg.Error as exc:
                if connection_lost(exc, conn):
                    raise
                error = f"the worker could not record the handler's error: {describe(exc)}"
                state = await sql.fail(conn, item.held.job_id, item.held.claimed.token, error)
            self._outbox.remove(item)
            self._forget(item.held)
            if state == "queued":
                self.counts.failed += 1
            elif state == "dead":
                self.counts.dead += 1
                log.warning("job %s is dead: %s", item.held.job_id, item.value, extra=item.held.log_extra)
            else:
                self._refused(item.held, "fail")
        for item in [o for o in self._outbox if o.kind == "release"]:
            released = await sql.release(conn, item.held.job_id, item.held.claimed.token)
            self._outbox.remove(item)
            self._forget(item.held)
            if released:
                self.counts.released += 1
        return claimed

    @staticmethod
    async def _complete_many(
        conn: psycopg.AsyncConnection[Any],
        items: list[Outcome],
        claim_args: tuple[str, str, int, float] | None = None,
    ) -> tuple[list[bool | None], list[sql.Claimed]]:
        """complete_many of the items; with claim_args, the claim in the same round trip."""
        job_ids = [o.held.job_id for o in items]
        tokens = [o.held.claimed.token for o in items]
        results = [o.value for o in items]
        rows: list[sql.Claimed] = []
        if claim_args is None:
            answers = await sql.complete_many(conn, job_ids, tokens, results)
        else:
            answers, rows = await sql.complete_many_then_claim(conn, job_ids, tokens, results, claim_args)
        return [completed for _, completed in answers], rows

    async def _complete_one(self, conn: psycopg.AsyncConnection[Any], item: Outcome) -> bool | None:
        """Complete one job; when the database refuses its result, fail the job instead (None)."""
        try:
            return (await self._complete_many(conn, [item]))[0][0]
        except psycopg.Error as exc:
            if connection_lost(exc, conn):
                raise
            item.kind, item.value = "fail", f"the database refused the result: {describe(exc)}"
            return None

    def _refused(self, held: Held, call: str) -> None:
        self.counts.stale += 1
        log.warning(
            "%s of job %s (attempt %s) refused: this worker no longer holds it; not reported as done",
            call,
            held.job_id,
            held.claimed.attempt,
            extra=held.log_extra,
        )

    # -- handlers ----------------------------------------------------------------

    def _start(self, row: sql.Claimed, sent: float) -> None:
        task = self.app.tasks.get(row.task)
        assert self._loop is not None
        common: dict[str, Any] = {
            "job_id": row.job_id,
            "attempt": row.attempt,
            "token": row.token,
            "payload": row.payload,
            "task": row.task,
            "idempotency_key": row.idempotency_key,
        }
        check = functools.partial(self._still_holder, row.job_id)
        ctx: BaseContext
        if task is not None and not task.is_async:
            ctx = SyncContext(loop=self._loop, check=check, **common)
        else:
            ctx = AsyncContext(check=check, **common)
        held = Held(row, task, ctx, safe_until=sent + self.settings.lease)
        self._held[row.job_id] = held
        self._running += 1
        self.counts.claimed += 1
        held.runner = asyncio.create_task(self._execute(held), name=f"taskboard-job-{row.job_id}")

    async def _execute(self, held: Held) -> None:
        try:
            await self._handle(held)
        except asyncio.CancelledError:
            pass  # lost, or shutdown: whoever cancelled settles the job
        except Exception:
            log.exception("job %s: the worker failed to settle it", held.job_id, extra=held.log_extra)
        finally:
            self._running -= 1
            self._wake.set()
            self._changed.set()

    async def _handle(self, held: Held) -> None:
        task = held.task
        if task is None:
            self._settle(
                Outcome(held, "fail", f"TaskError: no task named {held.claimed.task!r} in this worker")
            )
            return
        try:
            if task.transactional:
                await self._run_transactional(held, task)
                return
            result = await self._run_handler(held, task)
            outcome = Outcome(held, "complete", encode_result(result))
        except asyncio.CancelledError:
            raise
        except HandlerTimeout as exc:
            outcome = Outcome(held, "fail", f"TimeoutError: {exc}")
            log.warning("job %s: %s", held.job_id, exc, extra=held.log_extra)
        except Exception as exc:
            outcome = Outcome(held, "fail", describe(exc))
            log.warning("job %s failed", held.job_id, exc_info=True, extra=held.log_extra)
        self._settle(outcome)

    async def _run_handler(self, held: Held, task: Task) -> Any:
        if task.is_async:
            coro = task.handler(held.ctx, held.claimed.payload)
            return await bounded(coro, task.timeout, task.name)
        return await bounded(self._in_thread(task.handler, held), task.timeout, task.name)

    def _in_thread(self, handler: Callable[..., Any], held: Held) -> asyncio.Future[Any]:
        """Run a sync handler in a daemon thread: one abandoned past its timeout never blocks exit."""
        assert self._loop is not None
        loop = self._loop
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
                value = handler(held.ctx, held.claimed.payload)
            except BaseException as exc:  # noqa: BLE001 - delivered to the loop
                loop.call_soon_threadsafe(deliver, False, exc)
            else:
                loop.call_soon_threadsafe(deliver, True, value)

        threading.Thread(target=body, name=f"taskboard-job-{held.job_id}", daemon=True).start()
        return future

    async def _run_transactional(self, held: Held, task: Task) -> None:
        """Run the handler in a transaction that commits only with the job's completion."""
        assert self._pool is not None
        broken_commit: BaseException | None = None
        async with self._pool.connection() as conn:
            held.ctx.conn = conn
            try:
                if not await self._complete_in_transaction(held, task, conn):
                    return
                try:
                    await conn.commit()
                except psycopg.Error as exc:
                    if not connection_lost(exc, conn):
                        raise  # the transaction rolled back: the attempt failed
                    broken_commit = exc
                else:
                    self._forget(held)
                    self.counts.succeeded += 1
            finally:
                held.ctx.conn = None
                if not conn.closed and conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):
                        await conn.rollback()
        if broken_commit is not None:
            # Asked on another connection once the broken one went back to the pool.
            await self._resolve_broken_commit(held, broken_commit)

    async def _complete_in_transaction(
        self, held: Held, task: Task, conn: psycopg.AsyncConnection[Any]
    ) -> bool:
        """Run the handler and call complete on its connection; True when it may commit."""
        coro = task.handler(held.ctx, held.claimed.payload)
        result = await bounded(coro, task.timeout, task.name)
        result_json = encode_result(result)
        isolation = await sql.transaction_isolation(conn)
        if isolation != READ_COMMITTED:
            raise TaskError(
                f"transactional task {task.name!r} must run in READ COMMITTED, not {isolation}"
            )
        if held.ctx.lost:
            await conn.rollback()
            return False
        held.settling = True
        if await sql.complete(conn, held.job_id, held.claimed.token, result_json):
            return True
        await conn.rollback()
        self._forget(held)
        self._refused(held, "complete")
        return False

    async def _resolve_broken_commit(self, held: Held, exc: BaseException) -> None:
        """COMMIT broke off: learn from lease_state whether it happened; never complete again."""
        assert self._pool is not None
        log.warning(
            "job %s: connection lost during COMMIT (%s)", held.job_id, describe(exc), extra=held.log_extra
        )
        backoff = Backoff()
        while True:
            try:
                async with self._pool.connection() as other, other.transaction():
                    state = await sql.lease_state(other, held.job_id, held.claimed.token)
                break
            except (psycopg.OperationalError, PoolTimeout):
                if time.monotonic() >= held.safe_until:
                    held.settling = False
                    self._lose(held, "whether its COMMIT happened could not be learnt in time")
                    return
                await asyncio.sleep(backoff.next())
        if state == "completed":
            self._forget(held)
            self.counts.succeeded += 1
            return
        log.warning(
            "job %s: its COMMIT did not happen (lease_state %s)", held.job_id, state, extra=held.log_extra
        )
        self._settle(Outcome(held, "fail", f"{describe(exc)} (during COMMIT, which did not happen)"))

    async def _still_holder(self, job_id: int) -> bool:
        held = self._held.get(job_id)
        if held is None or held.ctx.lost:
            return False
        try:
            if held.ctx.conn is not None:
                return await sql.lease_state(held.ctx.conn, held.job_id, held.claimed.token) == "held"
            assert self._pool is not None
            async with self._pool.connection() as conn, conn.transaction():
                return await sql.lease_state(conn, held.job_id, held.claimed.token) == "held"
        except (psycopg.OperationalError, PoolTimeout):
            return False

    def _settle(self, outcome: Outcome, *, force: bool = False) -> None:
        """Queue an outcome for the control connection; a lost job gets none (except release)."""
        if outcome.held.ctx.lost and not force:
            return
        if outcome.held.job_id not in self._held:
            return
        if outcome.kind != "release":
            outcome.held.settling = True
        self._outbox.append(outcome)
        self._wake.set()

    def _forget(self, held: Held) -> None:
        if self._held.get(held.job_id) is held:
            del self._held[held.job_id]
            self._changed.set()

    def _lose(self, held: Held, why: str) -> None:
        """Give the job up: never complete or fail it; cancel its handler."""
        if held.ctx.lost or held.settling:
            return
        held.ctx.mark_lost()
        self.counts.lost += 1
        log.warning(
            "lost job %s (attempt %s): %s", held.job_id, held.claimed.attempt, why, extra=held.log_extra
        )
        if held.runner is not None and not held.runner.done():
            held.runner.cancel()  # a transactional handler's connection rolls back as it unwinds
        self._forget(held)

    # -- renewal -----------------------------------------------------------------

    async def _renewal(self) -> None:
        backoff = Backoff()
        conn: psycopg.AsyncConnection[Any] | None = None
        try:
            while not self._finished.is_set():
                delay = self.settings.renew_interval
                try:
                    if conn is None or conn.closed or conn.broken:
                        conn = await self._connect(self.settings.database_url)
                        backoff.reset()
                    await self._renew_all(conn)
                except (psycopg.OperationalError, TimeoutError) as exc:
                    delay = min(backoff.next(), self.settings.renew_interval)
                    log.warning("renewal failed (%s); retrying in %.1fs", describe(exc), delay)
                    if conn is not None:
                        await conn.close()
                    conn = None
                await self._sleep_unless_finished(delay)
        finally:
            if conn is not None:
                await conn.close()

    async def _renew_all(self, conn: psycopg.AsyncConnection[Any]) -> None:
        batch = [h for h in self._held.values() if not h.ctx.lost]
        if not batch:
            return
        sent = time.monotonic()
        answers = await asyncio.wait_for(
            sql.renew_many(
                conn, [h.job_id for h in batch], [h.claimed.token for h in batch], self.settings.lease
            ),
            self.settings.renew_interval,
        )
        for held in batch:
            if answers.get(held.job_id) is None:
                if self._held.get(held.job_id) is held:
                    self._lose(held, "renewal refused: the token is no longer current or the lease expired")
            else:
                held.safe_until = sent + self.settings.lease

    async def _watchdog(self) -> None:
        """Give up every job whose lease could have expired without a renewal."""
        while not self._finished.is_set():
            now = time.monotonic()
            for held in list(self._held.values()):
                if not held.ctx.lost and now >= held.safe_until:
                    self._lose(held, "no successful renewal before its lease could have expired")
            nearest = min((h.safe_until for h in self._held.values() if not h.ctx.lost), default=None)
            sleep = WATCHDOG_MAX_SLEEP_SECONDS if nearest is None else nearest - now
            await self._sleep_unless_finished(min(max(sleep, 0.01), WATCHDOG_MAX_SLEEP_SECONDS))

    async def _report(self) -> None:
        while not self._finished.is_set():
            await self._sleep_unless_finished(self.settings.stats_interval)
            if not self._finished.is_set():
                log.info("worker %s: %s", self.settings.worker_name, self.counts.line())

    async def _sleep_unless_finished(self, delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), delay)

