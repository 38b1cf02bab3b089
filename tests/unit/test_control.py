"""Control: claims go straight to the executor; outcomes go to the database, batched,
kept through errors, and settled as the database answers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
import pytest

from taskboard.context import AsyncContext
from taskboard.worker.control import Control
from taskboard.worker.held import Held, Ledger, State
from taskboard.worker.outcomes import Complete, Fail, Outcome, Release
from tests.support.fake_queries import CONN, FakeQueries, executor, hold, row, settings, task


async def forever(ctx: AsyncContext, payload: Any) -> None:
    await asyncio.Event().wait()


class Parts:
    """A Control over a FakeQueries, with its ledger and executor (pool_size 6: 4 slots)."""

    def __init__(self, cycles: int = 1) -> None:
        self.queries = FakeQueries()
        self.ledger = Ledger("unit")
        self.executor = executor(self.queries, self.ledger, {"t": task("t", forever)})
        self.stopping = asyncio.Event()
        self.control = Control(
            settings=settings(),
            queries=self.queries,
            ledger=self.ledger,
            executor=self.executor,
            queues=["q"],
            connect=self.connect,
            stopping=self.stopping,
            finished=asyncio.Event(),
            cycles=cycles,
        )

    async def connect(self, url: str) -> Any:
        raise AssertionError("these tests hand control a connection")

    def settled(self, job_id: int, outcome: Outcome) -> Held:
        held = hold(self.ledger, row(job_id))
        assert self.ledger.settle(held, outcome)
        return held


def run(test: Any) -> Any:
    return asyncio.run(test())


def test_completions_go_in_one_statement_with_the_claim_and_its_rows_start_at_once() -> None:
    async def test() -> None:
        parts = Parts()
        first = parts.settled(1, Complete('"a"'))
        second = parts.settled(2, Complete())
        parts.queries.script("complete_many_then_claim", ([(1, True), (2, True)], [row(3, "t")]))
        assert await parts.control.flush(CONN, "q")
        [(job_ids, tokens, results, claim_args)] = parts.queries.called("complete_many_then_claim")
        assert (job_ids, tokens, results) == ([1, 2], [first.token, second.token], ['"a"', None])
        assert claim_args == ("q", "unit", 4, 30.0)
        assert (first.state, second.state) == (State.COMPLETED, State.COMPLETED)
        [started] = list(parts.ledger)
        assert (started.job_id, started.state, parts.executor.running) == (3, State.RUNNING, 1)
        assert parts.ledger.counts.succeeded == 2

    run(test)


def test_the_claim_alone_asks_for_the_free_slots_and_hands_rows_to_the_executor() -> None:
    async def test() -> None:
        parts = Parts()
        parts.queries.script("claim", [row(1, "t"), row(2, "t")])
        await parts.control._claim(CONN, "q")
        assert parts.queries.called("claim") == [("q", "unit", 4, 30.0)]
        assert sorted(h.job_id for h in parts.ledger) == [1, 2]
        assert parts.executor.running == 2 and parts.executor.free_slots == 2
        parts.stopping.set()
        await parts.control._claim(CONN, "q")
        assert len(parts.queries.called("claim")) == 1

    run(test)


def test_a_claim_that_got_all_it_asked_for_claims_again_at_once() -> None:
    async def test() -> None:
        parts = Parts()
        parts.queries.script("claim", [row(1, "t")])
        parts.ledger.wake.clear()
        await parts.control._claim(CONN, "q")
        assert not parts.ledger.wake.is_set()  # asked for 4, got 1: nothing else waits
        parts.queries.script("claim", [row(job_id, "t") for job_id in (2, 3, 4)])
        await parts.control._claim(CONN, "q")
        assert parts.executor.free_slots == 0 and not parts.ledger.wake.is_set()

    run(test)


def test_fail_and_release_are_sent_one_by_one_as_they_are() -> None:
    async def test() -> None:
        parts = Parts()
        failed = parts.settled(1, Fail("E: x", retry_in=3.0, retry=False, traceback="tb"))
        released = parts.settled(2, Release(9.0))
        parts.queries.script("fail", "dead")
        assert not await parts.control.flush(CONN, "q")
        assert parts.queries.called("fail") == [(1, failed.token, "E: x", 3.0, False, "tb")]
        assert parts.queries.called("release") == [(2, released.token, 9.0)]
        assert (failed.state, released.state) == (State.FAILED, State.RELEASED)
        counts = parts.ledger.counts
        assert (counts.dead, counts.released, len(parts.ledger)) == (1, 1, 0)

    run(test)


@pytest.mark.parametrize(
    ("outcome", "method", "refusal"),
    [(Complete(), "complete_many", [(1, False)]), (Fail("E"), "fail", None)],
)
def test_an_outcome_refused_as_stale_makes_the_claim_lost(
    outcome: Outcome, method: str, refusal: Any
) -> None:
    async def test() -> None:
        parts = Parts()
        held = parts.settled(1, outcome)
        parts.queries.script(method, refusal)
        await parts.control.flush(CONN)
        assert held.state is State.LOST
        assert (parts.ledger.counts.stale, parts.ledger.counts.lost) == (1, 0)

    run(test)


def test_a_statement_error_on_the_batch_sends_each_completion_alone_without_the_claim() -> None:
    async def test() -> None:
        parts = Parts()
        first = parts.settled(1, Complete())
        second = parts.settled(2, Complete())
        locked = psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")
        parts.queries.script("complete_many_then_claim", locked)
        parts.queries.script("complete_many", locked, [(2, True)])
        assert not await parts.control.flush(CONN, "q")
        assert parts.queries.called("complete_many") == [
            ([1], [first.token], [None]),
            ([2], [second.token], [None]),
        ]
        assert first.state is State.SETTLING and first.failures == 1
        assert first.retry_at > time.monotonic()
        assert second.state is State.COMPLETED
        assert parts.ledger.outbox() == [first]
        await parts.control.flush(CONN)
        assert len(parts.queries.called("complete_many")) == 2  # not due yet

    run(test)


def test_a_lost_connection_keeps_every_outcome_for_the_next_one() -> None:
    async def test() -> None:
        parts = Parts()
        first = parts.settled(1, Complete())
        second = parts.settled(2, Fail("E"))
        parts.queries.script("complete_many", psycopg.OperationalError("server closed"))
        with pytest.raises(psycopg.OperationalError):
            await parts.control.flush(CONN)
        assert first.state is State.SETTLING and first.failures == 1
        assert second.state is State.SETTLING and parts.queries.called("fail") == []
        assert parts.ledger.outbox() == [first, second]

    run(test)


def test_a_result_the_database_refuses_is_replaced_by_a_note() -> None:
    async def test() -> None:
        parts = Parts()
        held = parts.settled(1, Complete('"\\u0000"'))
        refused = psycopg.errors.UntranslatableCharacter("unsupported Unicode")
        parts.queries.script("complete_many", refused, refused)  # in the batch, then alone
        await parts.control.flush(CONN)
        assert held.state is State.SETTLING and isinstance(held.outcome, Complete)
        assert held.outcome.result is not None
        assert "taskboard_result_not_stored" in held.outcome.result

    run(test)


def test_an_error_the_database_refuses_is_sent_without_its_traceback_and_delay() -> None:
    async def test() -> None:
        parts = Parts()
        held = parts.settled(1, Fail("E: x", retry_in=1e9, retry=False, traceback="tb"))
        parts.queries.script("fail", psycopg.errors.InvalidParameterValue("retry_in"))
        await parts.control.flush(CONN)
        assert held.state is State.SETTLING
        assert held.outcome == Fail(
            "the worker could not record the handler's error: InvalidParameterValue: retry_in",
            retry=False,
        )

    run(test)


def test_a_second_claim_of_one_job_waits_for_the_next_batch() -> None:
    async def test() -> None:
        parts = Parts()
        old = parts.settled(1, Complete())
        new = parts.settled(1, Complete())
        await parts.control.flush(CONN)
        assert (old.state, new.state) == (State.COMPLETED, State.SETTLING)
        assert parts.ledger.wake.is_set()
        await parts.control.flush(CONN)
        assert new.state is State.COMPLETED

    run(test)


def test_with_two_cycles_each_claim_asks_for_half_the_slots_less_the_claim_in_flight() -> None:
    async def test() -> None:
        parts = Parts(cycles=2)  # 4 slots: 2 a claim
        loop = asyncio.get_running_loop()
        answers: list[asyncio.Future[Any]] = [loop.create_future(), loop.create_future()]
        parts.queries.script("claim", *answers)
        claims = [asyncio.create_task(parts.control._claim(CONN, "q")) for _ in answers]
        await asyncio.sleep(0)  # both claims wait for the database
        await parts.control._claim(CONN, "q")  # every slot is taken or asked for
        answers[0].set_result([row(1, "t"), row(2, "t")])
        answers[1].set_result([row(3, "t")])
        await asyncio.gather(*claims)
        calls = parts.queries.called("claim")
        assert calls == [("q", "unit", 2, 30.0), ("q", "unit", 2, 30.0)]
        assert sorted(h.job_id for h in parts.ledger) == [1, 2, 3]
        assert parts.executor.free_slots == 1
        await parts.control._claim(CONN, "q")
        assert parts.queries.called("claim")[2:] == [("q", "unit", 1, 30.0)]

    run(test)


def test_a_claim_in_flight_that_fails_gives_its_slots_back() -> None:
    async def test() -> None:
        parts = Parts(cycles=2)
        parts.queries.script("claim", psycopg.errors.LockNotAvailable("lock timeout"))
        with pytest.raises(psycopg.errors.LockNotAvailable):
            await parts.control._claim(CONN, "q")
        first = parts.settled(1, Complete())
        parts.queries.script(
            "complete_many_then_claim", psycopg.errors.LockNotAvailable("lock timeout")
        )
        assert not await parts.control.flush(CONN, "q")
        assert first.state is State.COMPLETED  # sent again alone, without the claim
        await parts.control._claim(CONN, "q")
        assert parts.queries.called("claim")[-1] == ("q", "unit", 2, 30.0)

    run(test)


def test_two_cycles_never_send_the_same_outcome() -> None:
    async def test() -> None:
        parts = Parts(cycles=2)
        held = parts.settled(1, Complete())
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        parts.queries.script("complete_many", answer)
        first = asyncio.create_task(parts.control.flush(CONN))
        await asyncio.sleep(0)
        sent = held.state
        await parts.control.flush(CONN)  # the other cycle finds nothing to send
        answer.set_result([(1, True)])
        await first
        assert len(parts.queries.called("complete_many")) == 1
        assert (sent, held.state) == (State.SENDING, State.COMPLETED)

    run(test)
