"""The two races the soak found (soak/repro), driven through the executor, control and
renewal over a FakeQueries.

dropped_completion: a handler finished during an outage longer than its lease; the
watchdog gave its job up and dropped the completion waiting for the control
connection, so the job ran again although nobody had reclaimed it.

lost_after_settle: control sent a claim's fail (or complete), and before its answer
arrived a renewal of the same claim came back refused, because the fail had
committed; the worker counted the job lost as well as failed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
import pytest

from taskboard.context import AsyncContext
from taskboard.worker.control import Control
from taskboard.worker.held import Held, Ledger, State
from taskboard.worker.renewal import Renewal
from tests.support.fake_queries import (
    CONN,
    LEASE_SECONDS,
    FakeQueries,
    executor,
    held_in,
    row,
    settings,
    task,
    until,
)


class Worker:
    """The executor, control and renewal of one worker, sharing one ledger and FakeQueries."""

    def __init__(self, handler: Any) -> None:
        self.runs = 0

        async def counted(ctx: AsyncContext, payload: Any) -> Any:
            self.runs += 1
            return await handler(ctx, payload)

        self.queries = FakeQueries()
        self.ledger = Ledger("unit")
        self.executor = executor(self.queries, self.ledger, {"t": task("t", counted)})
        finished = asyncio.Event()

        async def connect(url: str) -> Any:
            raise AssertionError("these tests hand the worker's parts a connection")

        self.control = Control(
            settings=settings(),
            queries=self.queries,
            ledger=self.ledger,
            executor=self.executor,
            queues=["q"],
            connect=connect,
            stopping=asyncio.Event(),
            finished=finished,
        )
        self.renewal = Renewal(
            settings=settings(),
            queries=self.queries,
            ledger=self.ledger,
            connect=connect,
            finished=finished,
        )


def state(held: Held) -> State:
    """The claim's state now (read again after awaiting what moves it)."""
    return held.state


async def done(ctx: AsyncContext, payload: Any) -> str:
    return "sent"


async def broken(ctx: AsyncContext, payload: Any) -> None:
    raise RuntimeError("fails on purpose")


def test_a_completion_waiting_through_an_outage_is_sent_not_dropped() -> None:
    async def test() -> None:
        worker = Worker(done)
        # Claimed almost a lease ago: its lease could expire 50 ms from now.
        worker.executor.start(row(1, "t"), time.monotonic() - LEASE_SECONDS + 0.05, None)
        held = held_in(worker.ledger, 1)
        await until(lambda: held.state is State.SETTLING)
        # The outage: the completion cannot be sent, nor the lease renewed.
        outage = psycopg.OperationalError("server closed the connection unexpectedly")
        worker.queries.script("complete_many", outage)
        with pytest.raises(psycopg.OperationalError):
            await worker.control.flush(CONN)
        worker.queries.script("renew_many", outage)
        with pytest.raises(psycopg.OperationalError):
            await worker.renewal.renew_all(CONN)
        # The outage outlasts the lease; the watchdog runs past it.
        watchdog = asyncio.create_task(worker.renewal.watchdog())
        await asyncio.sleep(0.3)
        assert time.monotonic() > held.safe_until and held.retry_at <= time.monotonic()
        assert held.state is State.SETTLING and worker.ledger.outbox() == [held]
        # The server is back: nobody reclaimed the job, and its completion is accepted.
        await worker.control.flush(CONN)
        worker.renewal.finished.set()
        await watchdog
        assert state(held) is State.COMPLETED
        assert worker.queries.called("complete_many")[-1] == ([1], [held.token], ['"sent"'])
        assert worker.runs == 1
        counts = worker.ledger.counts
        assert (counts.succeeded, counts.lost, counts.stale) == (1, 0, 0)

    asyncio.run(test())


@pytest.mark.parametrize(
    ("handler", "method", "answer", "final"),
    [
        (broken, "fail", "dead", State.FAILED),
        (done, "complete_many", [(1, True)], State.COMPLETED),
    ],
    ids=["fail", "complete"],
)
def test_a_renewal_refused_while_the_outcome_is_on_its_way_does_not_lose_the_claim(
    handler: Any, method: str, answer: Any, final: State
) -> None:
    async def test() -> None:
        worker = Worker(handler)
        worker.executor.start(row(1, "t"), time.monotonic(), None)
        held = held_in(worker.ledger, 1)
        await until(lambda: held.state is State.SETTLING)
        # The outcome commits at once; its answer arrives late.
        late = asyncio.get_running_loop().create_future()
        worker.queries.script(method, late)
        sending = asyncio.create_task(worker.control.flush(CONN))
        await until(lambda: held.state is State.SENDING)
        # Renewal of the same claim: refused, the job is no longer running.
        worker.queries.script("renew_many", [None])
        await worker.renewal.renew_all(CONN)
        assert held.state is State.SENDING and not held.ctx.lost
        late.set_result(answer)
        await sending
        assert state(held) is final
        counts = worker.ledger.counts
        assert counts.lost == 0 and (counts.dead, counts.succeeded) == (
            (1, 0) if final is State.FAILED else (0, 1)
        )

    asyncio.run(test())
