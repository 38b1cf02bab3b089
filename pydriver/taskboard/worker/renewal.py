"""Renewal and the watchdog: keep every held lease alive, and give up what may have expired.

Renewal sends one renew_many for every held claim each `renew_every`, on
the worker's own connection. A row locked elsewhere (an admin's open
transaction) must not hold up the others: the connection waits briefly
for a lock (RENEW_LOCK_TIMEOUT_SECONDS, or a tenth of renew_every), and when renew_many gives up on
one, each claim is renewed on its own; the locked one is tried again next
time and is lost only if its lease really ran out.

The watchdog gives up a running claim once its lease could have expired
without a successful renewal, counted on this process's monotonic clock
from before the last successful claim or renew was sent. It leaves a
settling claim alone: its outcome is fenced on the token, so sending it
late is refused if someone reclaimed the job and accepted if nobody did,
and dropping it would run a finished handler again for nothing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

import psycopg

from taskboard.connections import Deadline
from taskboard.settings import Settings
from taskboard.sql import admin_async
from taskboard.sql import worker as sql_worker
from taskboard.sql.worker import Queries
from taskboard.worker.held import Held, Ledger, State, unique_jobs, wall_clock
from taskboard.worker.outcomes import describe
from taskboard.worker.retry import needs_new_connection, reconnecting, sleep_unless_set

log = logging.getLogger("taskboard.worker")

RENEW_LOCK_TIMEOUT_SECONDS = 0.5  # at most; a tenth of renew_every when that is shorter
WATCHDOG_MAX_SLEEP_SECONDS = 0.5


class Renewal:
    """Renews every held lease each `renew_every`; the watchdog gives up what may have expired."""

    def __init__(
        self,
        *,
        settings: Settings,
        queries: Queries,
        ledger: Ledger,
        connect: Callable[[str], Any],
        finished: asyncio.Event,
    ) -> None:
        self.settings = settings
        self.queries = queries
        self.ledger = ledger
        self.connect = connect
        self.finished = finished

    @property
    def lock_timeout(self) -> float:
        """How long a renewal waits for one row lock: a few locked rows fit in one round."""
        return min(RENEW_LOCK_TIMEOUT_SECONDS, self.settings.renew_interval / 10)

    async def run(self) -> None:
        async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
            await sql_worker.set_lock_timeout(conn, self.lock_timeout)

        async def session(conn: psycopg.AsyncConnection[Any]) -> None:
            while not self.finished.is_set():
                # A server that stops answering is left at the deadline, without a cancel
                # request (it would wait on the same server): reconnect, then renew.
                async with Deadline(
                    conn, min(self.settings.deadline, self.settings.renew_interval)
                ):
                    await self.renew_all(conn)
                await sleep_unless_set(self.finished, self.settings.renew_interval)

        await reconnecting(
            "renewal",
            lambda: self.connect(self.settings.database_url),
            session,
            until=self.finished,
            prepare=prepare,
            max_delay=self.settings.renew_interval,
            deadline=self.settings.deadline,
        )

    async def renew_all(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Renew every claim this worker holds; lose a running one whose renewal is refused."""
        pending = self.ledger.in_state(State.RUNNING, State.SETTLING, State.SENDING)
        while pending:
            batch, pending = unique_jobs(pending)
            sent, sent_at = time.monotonic(), wall_clock()
            try:
                answers = await self.queries.renew_many(
                    conn, [h.job_id for h in batch], [h.token for h in batch], self.settings.lease
                )
            except psycopg.Error as exc:
                if needs_new_connection(exc, conn):
                    raise
                log.warning(
                    "renew_many of %d lease(s) failed (%s): renewing them one by one",
                    len(batch),
                    describe(exc),
                )
                await self._renew_each(conn, batch)
                continue
            refused = [
                held
                for held, deadline in zip(batch, answers, strict=True)
                if self._answered(held, deadline, sent, sent_at)
            ]
            await self._refused(conn, refused)

    async def _renew_each(self, conn: psycopg.AsyncConnection[Any], batch: list[Held]) -> None:
        refused: list[Held] = []
        for held in batch:
            sent, sent_at = time.monotonic(), wall_clock()
            try:
                deadline = await self.queries.renew(
                    conn, held.job_id, held.token, self.settings.lease
                )
            except psycopg.Error as exc:
                if needs_new_connection(exc, conn):
                    raise
                log.warning(
                    "job %s: renewal could not be made now (%s); trying again next time",
                    held.job_id,
                    describe(exc),
                    extra=held.log_extra,
                )
                continue
            if self._answered(held, deadline, sent, sent_at):
                refused.append(held)
        await self._refused(conn, refused)

    def _answered(self, held: Held, deadline: Any, sent: float, sent_at: dt.datetime) -> bool:
        """Record the renewal's answer; True when it was refused and `held` is running
        (to be given up: see _refused), False otherwise. A settling claim's outcome is on
        its way: the database's answer to it decides."""
        if not self.ledger.holds(held):
            return False
        self.ledger.event(held, "renewed", answer=deadline, sent_at=sent_at)
        if deadline is None:
            return held.state is State.RUNNING
        held.safe_until = sent + self.settings.lease
        return False

    async def _refused(self, conn: psycopg.AsyncConnection[Any], refused: list[Held]) -> None:
        """Give up each running claim whose renewal was refused, saying why: the job's
        state, read only here, tells a cancel from a later claim or an expired lease."""
        for held in refused:
            try:
                job = await self.queries.get_job(conn, held.job_id)
            except psycopg.Error as exc:
                log.debug("job %s: why renewal was refused is unknown (%s)", held.job_id, exc)
                why = "the token is no longer current or the lease expired"
            else:
                why = refusal_reason(held, job)
            self.ledger.lose(held, f"renewal refused: {why}")

    async def watchdog(self) -> None:
        """Give up every claim whose lease could have expired without a renewal."""
        while not self.finished.is_set():
            now = time.monotonic()
            running = self.ledger.in_state(State.RUNNING)
            for held in running:
                if now >= held.safe_until:
                    self.ledger.lose(
                        held, "no successful renewal before its lease could have expired"
                    )
            nearest = min((h.safe_until for h in running), default=None)
            sleep = WATCHDOG_MAX_SLEEP_SECONDS if nearest is None else nearest - now
            await sleep_unless_set(self.finished, min(max(sleep, 0.01), WATCHDOG_MAX_SLEEP_SECONDS))


def refusal_reason(held: Held, job: admin_async.JobInfo | None) -> str:
    """Why the renewal of `held` was refused, from the job as get_job shows it now."""
    if job is None:
        return "the job no longer exists"
    mine = job.fence is None or held.claimed.fence is None or job.fence == held.claimed.fence
    if not mine:
        return f"the job was claimed again (fence {job.fence}, this claim's {held.claimed.fence})"
    if job.state == "cancelled":
        return "the job was cancelled"
    if job.state == "running":
        return "its lease expired"
    return "the job has succeeded" if job.state == "succeeded" else f"the job is {job.state}"
