"""Transactional execution: a handler's writes commit only with its job's completion.

The handler runs on a handler-pool connection, in a READ COMMITTED
transaction it reaches as `ctx.conn`. When it returns, `complete` runs on
that connection, inside that transaction, and COMMIT follows only when it
answered true: the handler's writes and the job's completion commit
together or not at all. A handler that committed or rolled back `ctx.conn`
itself fails its attempt (FenceEscaped). When the connection breaks while
complete or COMMIT is on its way, lease_state, asked on another
connection, tells whether the completion committed; it is never sent
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import psycopg
from psycopg import pq
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from taskboard.connections import Deadline
from taskboard.errors import TaskError
from taskboard.sql import worker as sql_worker
from taskboard.sql.worker import Queries
from taskboard.tasks import Task
from taskboard.worker.endings import Endings, bounded
from taskboard.worker.held import Held, Ledger, State
from taskboard.worker.outcomes import Complete, Fail, describe
from taskboard.worker.retry import Backoff, connection_lost

log = logging.getLogger("taskboard.worker")

READ_COMMITTED = "read committed"


class FenceEscaped(TaskError):
    """A transactional handler committed or rolled back `ctx.conn` itself."""


class Transactional:
    """Runs transactional handlers, each in a transaction that commits with its completion."""

    def __init__(
        self,
        *,
        queries: Queries,
        ledger: Ledger,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]],
        endings: Endings,
        deadline: float | None = None,
    ) -> None:
        self.queries = queries
        self.deadline = deadline  # seconds the server has to answer the driver's statements
        self.ledger = ledger
        self.pool = pool
        self.endings = endings

    async def run(self, held: Held, task: Task) -> None:
        """Run the handler in a transaction that commits only with the job's completion."""
        broken_commit: BaseException | None = None
        async with self.pool.connection() as conn:
            held.ctx.conn = conn
            try:
                committed = await self._complete_in_transaction(held, task, conn)
            except psycopg.Error as exc:
                if held.state is State.SENDING and connection_lost(exc, conn):
                    broken_commit = exc  # COMMIT or complete broke off: resolved below
                else:
                    self._fail(held, exc)
                committed = False
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
                self._fail(held, asyncio.CancelledError("raised by the handler"))
                committed = False
            except BaseException as exc:  # noqa: BLE001 - any ending of a handler fails its job
                self._fail(held, exc)
                committed = False
            finally:
                held.ctx.conn = None
                if not conn.closed and conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):
                        await conn.rollback()
            if committed:
                self.ledger.resolve(held, State.COMPLETED, True)
        if broken_commit is not None:
            # Asked on another connection once the broken one went back to the pool.
            await self._resolve_broken_commit(held, broken_commit)

    def _fail(self, held: Held, exc: BaseException) -> None:
        if held.state is State.SENDING:
            # complete or COMMIT raised: nothing committed; the attempt failed.
            self.ledger.amend(
                held, Fail(describe(exc), retry_in=self.endings.policy_delay(held, exc))
            )
            held.exception = exc
            log.warning("job %s failed", held.job_id, exc_info=exc, extra=held.log_extra)
            return
        self.ledger.settle(held, self.endings.failure(held, exc))

    async def _complete_in_transaction(
        self, held: Held, task: Task, conn: psycopg.AsyncConnection[Any]
    ) -> bool:
        """Run the handler and call complete on its connection; True once it committed."""
        async with Deadline(conn, self.deadline):
            isolation = await sql_worker.transaction_isolation(conn)
        if isolation != READ_COMMITTED:
            raise TaskError(
                f"transactional task {task.name!r} must run in READ COMMITTED, not {isolation}"
            )
        async with Deadline(conn, self.deadline):
            xid = await sql_worker.transaction_id(conn)
        coro = task.handler(held.ctx, held.ctx.payload)
        result = await bounded(coro, task.timeout, task.name)
        outcome = Complete(self.endings.result_json(held, result))
        # From here the database's answer decides: the watchdog leaves the claim alone.
        if not self.ledger.settle_in_transaction(held, outcome):
            await conn.rollback()
            return False
        if await self._transaction_changed(conn, xid):
            raise FenceEscaped(
                f"transactional task {task.name!r} committed or rolled back ctx.conn itself: "
                "its writes were not fenced by the job's completion"
            )
        self.ledger.note_sent(held)
        # No deadline on complete and COMMIT: a row lock may hold them past the lease, and
        # the database's answer decides (TCP keepalives notice a host gone away).
        if not await self.queries.complete(conn, held.job_id, held.token, outcome.result):
            await conn.rollback()
            self.ledger.resolve(held, State.LOST, False)
            return False
        await conn.commit()
        return True

    @staticmethod
    async def _transaction_changed(conn: psycopg.AsyncConnection[Any], xid: int) -> bool:
        """True when the transaction the handler was given is no longer the open one."""
        if conn.info.transaction_status != pq.TransactionStatus.INTRANS:
            return True
        return await sql_worker.transaction_id_if_assigned(conn) != xid

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
                async with (
                    self.pool.connection() as other,
                    Deadline(other, self.deadline),
                    other.transaction(),
                ):
                    state = await self.queries.lease_state(other, held.job_id, held.token)
                break
            except (psycopg.Error, PoolTimeout):
                if time.monotonic() >= held.safe_until:
                    self.ledger.abandon(
                        held, "whether its COMMIT happened could not be learnt in time"
                    )
                    return
                await asyncio.sleep(backoff.next())
        if state == "completed":
            self.ledger.resolve(held, State.COMPLETED, True)
            return
        log.warning(
            "job %s: its COMMIT did not happen (lease_state %s)",
            held.job_id,
            state,
            extra=held.log_extra,
        )
        self.ledger.amend(held, Fail(f"{describe(exc)} (during COMMIT, which did not happen)"))
