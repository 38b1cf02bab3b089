"""The executor: a claim handed to it is held and run, and every way a handler ends
becomes one outcome (settling), or none when the worker gave the claim up."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from taskboard.context import AsyncContext, SyncContext
from taskboard.retries import Abort, Retry
from taskboard.worker.held import Ledger, State
from taskboard.worker.outcomes import Complete, Fail, Outcome, Release
from tests.support.fake_queries import CONN, FakeQueries, executor, held_in, row, task, until


def outcome_of(handler: Any, **task_options: Any) -> Outcome | None:
    """Run one claim of a task with `handler` to its end: the outcome it settled with."""

    async def run() -> Outcome | None:
        ledger = Ledger("unit")
        ex = executor(FakeQueries(), ledger, {"t": task("t", handler, **task_options)})
        ex.start(row(1, "t"), time.monotonic(), None)
        held = held_in(ledger, 1)
        assert held.runner is not None
        await held.runner
        assert held.state is State.SETTLING and ex.running == 0
        return held.outcome

    return asyncio.run(run())


def test_a_returned_value_completes_with_its_json() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> dict[str, int]:
        return {"sent": 1}

    assert outcome_of(handler) == Complete('{"sent": 1}')


def test_a_sync_handler_runs_in_a_thread_and_completes() -> None:
    def handler(ctx: SyncContext, payload: Any) -> str:
        return "ok"

    assert outcome_of(handler) == Complete('"ok"')


def test_a_result_that_cannot_be_stored_completes_with_a_note() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> float:
        return float("nan")

    outcome = outcome_of(handler)
    assert isinstance(outcome, Complete) and outcome.result is not None
    assert "taskboard_result_not_stored" in outcome.result


def test_an_exception_fails_the_attempt_with_its_traceback_and_the_policys_delay() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        raise ValueError("no such customer")

    outcome = outcome_of(handler, retry=lambda attempt, exc: 12.5)
    assert isinstance(outcome, Fail)
    assert (outcome.error, outcome.retry_in, outcome.retry) == (
        "ValueError: no such customer",
        12.5,
        True,
    )
    assert outcome.traceback is not None and "no such customer" in outcome.traceback


def test_retry_fails_the_attempt_with_its_own_delay() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        raise Retry("later", after=5)

    outcome = outcome_of(handler, retry=lambda attempt, exc: 60.0)
    assert isinstance(outcome, Fail) and outcome.retry_in == 5


def test_abort_fails_the_job_for_good() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        raise Abort("the card was refused")

    outcome = outcome_of(handler)
    assert isinstance(outcome, Fail) and outcome.retry is False


def test_snooze_releases_the_job_with_its_delay() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        ctx.snooze(30)

    assert outcome_of(handler) == Release(30.0)


def test_a_timeout_fails_the_attempt_without_a_traceback() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        await asyncio.sleep(10)

    outcome = outcome_of(handler, timeout=0.01)
    assert isinstance(outcome, Fail) and outcome.traceback is None
    assert outcome.error == "TimeoutError: task 't' ran past its timeout of 0.01s"


def test_a_task_this_worker_does_not_know_is_handed_back() -> None:
    async def run() -> Outcome | None:
        ledger = Ledger("unit")
        ex = executor(FakeQueries(), ledger, unknown_task_delay=42.0)
        ex.start(row(1, "new-task"), time.monotonic(), None)
        held = held_in(ledger, 1)
        assert held.runner is not None
        await held.runner
        return held.outcome

    assert asyncio.run(run()) == Release(42.0)


def test_a_payload_python_cannot_decode_fails_before_the_handler_runs() -> None:
    ran: list[int] = []

    async def handler(ctx: AsyncContext, payload: Any) -> None:
        ran.append(1)

    async def run() -> Outcome | None:
        ledger = Ledger("unit")
        ex = executor(FakeQueries(), ledger, {"t": task("t", handler)})
        claimed = dataclasses.replace(row(1, "t"), payload_error="the payload is nested too deeply")
        ex.start(claimed, time.monotonic(), None)
        held = held_in(ledger, 1)
        assert held.runner is not None
        await held.runner
        return held.outcome

    assert asyncio.run(run()) == Fail("the payload is nested too deeply")
    assert ran == []


def test_the_control_loop_hands_a_claim_straight_to_a_slot() -> None:
    gate = asyncio.Event()

    async def handler(ctx: AsyncContext, payload: Any) -> None:
        await gate.wait()

    async def run() -> None:
        ledger = Ledger("unit")
        ex = executor(FakeQueries(), ledger, {"t": task("t", handler)}, pool_size=4)
        assert ex.free_slots == 2
        sent = time.monotonic()
        ex.start(row(1, "t"), sent, None)
        held = held_in(ledger, 1)
        assert (held.state, held.safe_until, ex.free_slots) == (State.RUNNING, sent + 30.0, 1)
        assert held.ctx.job_id == 1 and held.ctx.token == held.token
        gate.set()
        await until(lambda: ex.running == 0)
        assert held.state is State.SETTLING and ex.free_slots == 2

    asyncio.run(run())


def test_a_claim_lost_while_its_handler_runs_settles_nothing() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        await asyncio.sleep(10)

    async def run() -> None:
        queries = FakeQueries()
        ledger = Ledger("unit")
        ex = executor(queries, ledger, {"t": task("t", handler)})
        ex.start(row(1, "t"), time.monotonic(), None)
        held = held_in(ledger, 1)
        await asyncio.sleep(0)
        assert ledger.lose(held, "renewal refused")
        await until(lambda: ex.running == 0)
        assert held.state is State.LOST and held.outcome is None
        assert await ex.still_holder(held) is False
        assert queries.calls == []

    asyncio.run(run())


def test_the_holder_check_asks_for_the_claims_own_token() -> None:
    async def handler(ctx: AsyncContext, payload: Any) -> None:
        await asyncio.Event().wait()

    async def run() -> None:
        queries = FakeQueries()
        ledger = Ledger("unit")
        seen: list[str] = []
        ledger.hooks = (lambda e: seen.append(e.kind),)
        ex = executor(queries, ledger, {"t": task("t", handler)})
        ex.start(row(1, "t"), time.monotonic(), None)
        held = held_in(ledger, 1)
        held.ctx.conn = CONN  # a transactional handler's connection: no pool needed
        queries.script("lease_state", "held", "lost")
        assert isinstance(held.ctx, AsyncContext)
        assert await held.ctx.still_holder() is True
        assert await ex.still_holder(held) is False
        assert queries.called("lease_state") == [(1, held.token), (1, held.token)]
        assert seen.count("holder_checked") == 2
        ledger.lose(held, "renewal refused")

    asyncio.run(run())
