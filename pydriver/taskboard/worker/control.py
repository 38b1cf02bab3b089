"""Control: the worker's own connection for LISTEN, claim, and settling ordinary jobs.

Each pass sends what handlers finished (completions in one complete_many,
with the next claim in the same statement), then claims for the free
slots, handing each claimed row straight to the executor, then does the
chores that are due (the periodic schedules' due slots, see scheduler;
retention's prune, one batch, see retention), then waits for a
notification, a handler's end, the next chore or the poll interval.

With `cycles_in_flight = 2` a second connection runs the same passes without
LISTEN and chores, and each claim asks for at most half the handler slots,
less what the other cycle's claim in flight may fill: the database works on
one cycle while the handlers of the other run. An outcome is sent by one
cycle only (the ledger's sending state), so the two never send the same one.

A settling claim's outcome is sent (the claim is then sending) and the
claim settled only by the database's answer; a send that raised puts it
back to settling. A transient error (lock or statement timeout, a cancelled statement, a
serialization failure, a deadlock) or a broken connection sends it again
— complete, fail and release are fenced on the token and idempotent —
until the database answers: after a reclaim the fence refuses it, and if
nobody reclaimed the job it is accepted even past the lease. A result the
database refuses is replaced by a note saying why, so a handler that
succeeded is never run again for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import psycopg

from taskboard.connections import Deadline
from taskboard.settings import Settings
from taskboard.sql import worker as sql_worker
from taskboard.sql.worker import Queries
from taskboard.worker.executor import Handlers
from taskboard.worker.held import Held, Ledger, State, unique_jobs, wall_clock
from taskboard.worker.outcomes import Complete, Fail, Outcome, Release, describe, not_stored
from taskboard.worker.retry import (
    Backoff,
    ReconnectNeeded,
    needs_new_connection,
    reconnecting,
    sleep_unless_set,
)

log = logging.getLogger("taskboard.worker")

# A row lock held elsewhere (an admin's open transaction) delays one
# outcome, never the claims and the other outcomes behind it.
CONTROL_LOCK_TIMEOUT_SECONDS = 1.0
MAX_CLAIM_BATCH = 1000  # claim's own bound on batch


class Chore(Protocol):
    """Housekeeping the control loop does between claims, when it is due."""

    def due(self) -> bool: ...

    def seconds_until_due(self) -> float: ...

    async def run(self, conn: psycopg.AsyncConnection[Any]) -> None: ...


class Control:
    """Claims for free slots, hands each claim to the executor, and tells the database
    each finished handler's outcome."""

    def __init__(
        self,
        *,
        settings: Settings,
        queries: Queries,
        ledger: Ledger,
        executor: Handlers,
        queues: Sequence[str],
        connect: Callable[[str], Any],
        stopping: asyncio.Event,
        finished: asyncio.Event,
        chores: Sequence[Chore] = (),
        cycles: int = 1,
    ) -> None:
        self.settings = settings
        self.queries = queries
        self.ledger = ledger
        self.executor = executor
        self.queues = list(queues)
        self.connect = connect
        self.stopping = stopping
        self.finished = finished
        self.chores = list(chores)
        self.cycles = cycles
        # With two cycles, each claims for at most half the handlers: while the
        # database works on one, the handlers of the other run and finish.
        self._share = -(-executor.max_handlers // cycles)
        self._reserved = 0  # slots that claims in flight may fill
        self._next_queue = 0
        # A statement waits up to CONTROL_LOCK_TIMEOUT_SECONDS for a row lock: that is
        # an answer (LockNotAvailable), not a server gone quiet.
        self.deadline = max(settings.deadline, 2 * CONTROL_LOCK_TIMEOUT_SECONDS)

    @property
    def claiming(self) -> bool:
        """Whether a claim is on its way: the database may have handed out jobs whose
        rows this worker has not read yet (shutdown waits for them)."""
        return self._reserved > 0

    def _claim_answered(self, batch: int) -> None:
        self._reserved -= batch
        self.ledger.changed.set()  # shutdown may be waiting for the answer

    # -- the loop ---------------------------------------------------------------------

    async def run(self) -> None:
        listen_url = self.settings.listen_target
        listen_here = listen_url == self.settings.database_url
        listener = None
        if listen_url is not None and not listen_here:
            listener = asyncio.create_task(
                self._listen_elsewhere(listen_url), name="taskboard-listen"
            )

        async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
            await sql_worker.prepare_claimer(conn, CONTROL_LOCK_TIMEOUT_SECONDS)
            if listen_here:
                await self.queries.listen(conn)

        async def session(conn: psycopg.AsyncConnection[Any]) -> None:
            await self._session(conn, listen_here, self.chores)

        async def second(conn: psycopg.AsyncConnection[Any]) -> None:
            await self._session(conn, False, ())

        passes = [
            reconnecting(
                "control connection",
                lambda: self.connect(self.settings.database_url),
                session,
                until=self.finished,
                prepare=prepare,
                back="control connection back: claiming at once",
                deadline=self.deadline,
            )
        ]
        if self.cycles > 1:
            passes.append(
                reconnecting(
                    "second control connection",
                    lambda: self.connect(self.settings.database_url),
                    second,
                    until=self.finished,
                    prepare=lambda conn: sql_worker.prepare_claimer(
                        conn, CONTROL_LOCK_TIMEOUT_SECONDS
                    ),
                    deadline=self.deadline,
                )
            )
        try:
            await asyncio.gather(*passes)
        finally:
            if listener is not None:
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)

    async def _session(
        self, conn: psycopg.AsyncConnection[Any], listening: bool, chores: Sequence[Chore]
    ) -> None:
        errors = Backoff()
        while not self.finished.is_set():
            self.ledger.wake.clear()
            try:
                order = [] if self.stopping.is_set() else self._claim_order()
                # The first queue's claim rides with the completions when there are any.
                claimed = await self.flush(conn, order[0] if order else None)
                for queue in order[1:] if claimed else order:
                    await self._claim(conn, queue)
                for chore in [] if self.stopping.is_set() else chores:
                    if chore.due():
                        async with Deadline(conn, self.deadline):
                            await chore.run(conn)
                errors.reset()
            except psycopg.Error as exc:
                if needs_new_connection(exc, conn):
                    raise ReconnectNeeded(describe(exc)) from exc
                # A statement failed; the connection is fine: say so and go on.
                delay = errors.next()
                log.warning("control: %s; retrying in %.1fs", describe(exc), delay)
                await sleep_unless_set(self.finished, delay)
                continue
            await self._idle(conn if listening else None, chores)

    def _claim_order(self) -> list[str]:
        """The queues to claim from, starting at a different one each time (no starving)."""
        order = self.queues[self._next_queue :] + self.queues[: self._next_queue]
        self._next_queue = (self._next_queue + 1) % len(self.queues)
        return order

    def _claim_args(self, queue: str) -> tuple[str, str, int, float] | None:
        """claim's arguments for as many jobs as there are free handler slots (in a worker
        with a transactional task, at most its handler connections: see Executor).

        None when every slot is taken, or once shutdown began (it may begin
        while the control loop waits on the database). The slots asked for are
        reserved until the claim's answer: the caller gives them back then.
        """
        free = self._capacity()
        if free <= 0 or self.stopping.is_set():
            return None
        self._reserved += free
        return (queue, self.settings.worker_name, free, self.settings.lease)

    def _capacity(self) -> int:
        """How many jobs the next claim may take (see _claim_args): the free slots no claim
        in flight may fill, at most a cycle's share of the handlers."""
        free = self.executor.free_slots - self._reserved
        return min(free, self._share, MAX_CLAIM_BATCH)

    async def _claim(self, conn: psycopg.AsyncConnection[Any], queue: str) -> None:
        args = self._claim_args(queue)
        if args is None:
            return
        sent, sent_at = time.monotonic(), wall_clock()
        try:
            async with Deadline(conn, self.deadline):
                rows = await self.queries.claim(conn, *args)
        finally:
            self._claim_answered(args[2])
        self.executor.start_all(rows, sent, sent_at)
        self._more_may_wait(len(rows), args[2])
        if rows:
            await asyncio.sleep(0)  # the handlers begin before this loop's chores and wait

    async def _idle(
        self, listener: psycopg.AsyncConnection[Any] | None, chores: Sequence[Chore]
    ) -> None:
        """Wait for a wake-up, a notification for one of our queues, the next chore, or
        the poll interval."""
        chores = [] if self.stopping.is_set() else chores
        timeout = min([self.settings.poll_interval, *(c.seconds_until_due() for c in chores)])
        retry_at = [h.retry_at for h in self.ledger.outbox() if h.retry_at]
        if retry_at:
            timeout = min(timeout, max(min(retry_at) - time.monotonic(), 0.0))
        waiters: list[asyncio.Task[Any]] = [asyncio.create_task(self.ledger.wake.wait())]
        if listener is not None and self._capacity() > 0:
            waiters.append(asyncio.create_task(self._notified(listener)))
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
            # The wake-up's waiter holds nothing; the listener's holds the connection
            # until it ends: only that one is waited for, when it has not ended already.
            listening = [w for w in waiters[1:] if not w.done()]
            if listening:
                await asyncio.gather(*listening, return_exceptions=True)
        for waiter in done:
            waiter.result()  # a broken connection surfaces here

    async def _notified(self, conn: psycopg.AsyncConnection[Any]) -> None:
        # Closed on the way out, which frees the connection for the claim at once (an
        # abandoned generator holds it until the loop finalizes it).
        async with contextlib.aclosing(conn.notifies()) as notes:
            async for note in notes:
                if note.payload in self.queues:
                    return

    async def _listen_elsewhere(self, url: str) -> None:
        """LISTEN on a direct connection (database_url goes through a transaction pooler)."""

        async def session(conn: psycopg.AsyncConnection[Any]) -> None:
            self.ledger.wake.set()  # claim at once after (re)connecting
            while True:
                try:
                    await asyncio.wait_for(self._notified(conn), self.settings.renew_interval)
                except TimeoutError:
                    # Quiet for a while: make sure the server still answers, or reconnect.
                    async with Deadline(conn, self.deadline):
                        await self.queries.version(conn)
                    continue
                self.ledger.wake.set()

        await reconnecting(
            "listen connection",
            lambda: self.connect(url),
            session,
            until=self.finished,
            prepare=self.queries.listen,
            deadline=self.deadline,
        )

    # -- settling ---------------------------------------------------------------------

    async def flush(
        self, conn: psycopg.AsyncConnection[Any], claim_from: str | None = None
    ) -> bool:
        """Tell the database every outcome that is due; completions in one complete_many.

        With `claim_from`, the claim for the free slots goes in the same
        statement as the completions when there are both; returns whether
        it did (else the caller claims by itself).
        """
        now = time.monotonic()
        due = [h for h in self.ledger.outbox() if h.retry_at <= now]
        completions = [h for h in due if isinstance(h.outcome, Complete)]
        claimed = False
        if completions:
            batch, rest = unique_jobs(completions)
            if rest:
                self.ledger.wake.set()  # the second claim of a job id goes in the next pass
            claim_args = None if claim_from is None else self._claim_args(claim_from)
            try:
                claimed = await self._complete_batch(conn, batch, claim_args)
            finally:
                if claim_args is not None:
                    self._claim_answered(claim_args[2])
        for held in due:
            if not isinstance(held.outcome, Complete):
                await self._send_one(conn, held)
        return claimed

    async def _complete_batch(
        self,
        conn: psycopg.AsyncConnection[Any],
        batch: list[Held],
        claim_args: tuple[str, str, int, float] | None,
    ) -> bool:
        """complete_many of `batch` (with the claim); one by one when the batch fails.

        Returns whether the claim was made.
        """
        try:
            async with Deadline(conn, self.deadline):
                return await self._complete(conn, batch, claim_args)
        except psycopg.Error as exc:
            if needs_new_connection(exc, conn):
                for held in batch:
                    self.ledger.send_failed(held, exc)
                raise
            # The claim sent with them, one row locked elsewhere or one result
            # refused must not hold up the rest, nor be blamed on the wrong
            # one: settle them one by one, without a claim (it was not made).
            for held in batch:
                self.ledger.requeue(held)
            for held in batch:
                await self._send_one(conn, held)
            return False

    async def _complete(
        self,
        conn: psycopg.AsyncConnection[Any],
        batch: list[Held],
        claim_args: tuple[str, str, int, float] | None,
    ) -> bool:
        """complete_many of the settling completions in `batch`, with the claim when there
        are `claim_args`; every completion the control connection sends goes through here,
        a single one as a batch of one. Returns whether the claim was made."""
        sent, sent_at = time.monotonic(), wall_clock()
        sending = [h for h in batch if self.ledger.sending(h, sent_at)]
        if not sending:
            return False
        job_ids = [h.job_id for h in sending]
        tokens = [h.token for h in sending]
        results = [h.outcome.result if isinstance(h.outcome, Complete) else None for h in sending]
        if claim_args is None:
            answers = await self.queries.complete_many(conn, job_ids, tokens, results)
            rows: list[sql_worker.Claimed] = []
        else:
            answers, rows = await self.queries.complete_many_then_claim(
                conn, job_ids, tokens, results, claim_args
            )
        for held, (_, completed) in zip(sending, answers, strict=True):
            self.ledger.resolve(held, State.COMPLETED if completed else State.LOST, completed)
        self.executor.start_all(rows, sent, sent_at)
        if claim_args is None:
            return False
        self._more_may_wait(len(rows), claim_args[2])
        return True

    def _more_may_wait(self, got: int, asked: int) -> None:
        """A claim that got all it asked for may have left runnable jobs behind: with slots
        still free (a claim asks for at most MAX_CLAIM_BATCH jobs, and `concurrency` may be
        more), the loop claims again at once instead of idling."""
        if got >= asked and self._capacity() > 0:
            self.ledger.wake.set()

    async def _send_one(self, conn: psycopg.AsyncConnection[Any], held: Held) -> None:
        """Send one claim's outcome; on a statement error keep it for a later try."""
        outcome = held.outcome
        try:
            async with Deadline(conn, self.deadline):
                await self._send(conn, held, outcome)
        except psycopg.Error as exc:
            self.ledger.send_failed(held, exc)
            if needs_new_connection(exc, conn):
                raise
            if isinstance(exc, psycopg.errors.DataError):
                self._result_refused(held, exc)

    async def _send(
        self, conn: psycopg.AsyncConnection[Any], held: Held, outcome: Outcome | None
    ) -> None:
        """The one statement that tells the database `outcome` of `held`."""
        match outcome:
            case Complete():
                await self._complete(conn, [held], None)
            case Fail(error=error, retry_in=retry_in, retry=retry, traceback=traceback):
                if not self.ledger.sending(held):
                    return
                state = await self.queries.fail(
                    conn, held.job_id, held.token, error, retry_in, retry, traceback
                )
                self.ledger.resolve(held, State.FAILED if state else State.LOST, state)
            case Release(delay=delay):
                if not self.ledger.sending(held):
                    return
                released = await self.queries.release(conn, held.job_id, held.token, delay)
                self.ledger.resolve(held, State.RELEASED, released)
            case None:
                return

    def _result_refused(self, held: Held, exc: psycopg.Error) -> None:
        """The database refused the outcome's data: send a version it stores next."""
        match held.outcome:
            case Complete():
                why = f"the database refused the result: {describe(exc)}"
                log.warning(
                    "job %s succeeded but its result is not stored: %s",
                    held.job_id,
                    why,
                    extra=held.log_extra,
                )
                self.ledger.amend(held, Complete(not_stored(why)))
            case Fail(retry=retry):
                # Without the traceback and the delay, either of which may be what was refused.
                error = f"the worker could not record the handler's error: {describe(exc)}"
                self.ledger.amend(held, Fail(error, retry=retry))
            case _:
                self.ledger.wake.set()
