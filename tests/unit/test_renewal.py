"""Renewal and the watchdog over a FakeQueries, and the one reconnect loop."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from taskboard.sql import admin_async
from taskboard.worker.held import Ledger, State
from taskboard.worker.outcomes import Complete
from taskboard.worker.renewal import Renewal
from taskboard.worker.retry import reconnecting
from tests.support.fake_queries import CONN, LEASE_SECONDS, FakeQueries, hold, row, settings


def renewal(queries: FakeQueries, ledger: Ledger, finished: asyncio.Event | None = None) -> Renewal:
    async def connect(url: str) -> Any:
        raise AssertionError("these tests hand renewal a connection")

    return Renewal(
        settings=settings(),
        queries=queries,
        ledger=ledger,
        connect=connect,
        finished=finished or asyncio.Event(),
    )


def test_one_renew_many_renews_every_claim_held_and_moves_its_deadline() -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        running = hold(ledger, row(1), safe_for=1.0)
        settling = hold(ledger, row(2), safe_for=1.0)
        ledger.settle(settling, Complete())
        before = time.monotonic()
        await renewal(queries, ledger).renew_all(CONN)
        [(job_ids, tokens, lease)] = queries.called("renew_many")
        assert (job_ids, tokens, lease) == ([1, 2], [running.token, settling.token], 30.0)
        assert running.safe_until >= before + LEASE_SECONDS

    asyncio.run(test())


def test_a_refused_renewal_loses_a_running_claim() -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        held = hold(ledger, row(1))
        queries.script("renew_many", [None])
        await renewal(queries, ledger).renew_all(CONN)
        assert held.state is State.LOST and ledger.counts.lost == 1

    asyncio.run(test())


def job_info(job_id: int, state: str, fence: int) -> admin_async.JobInfo:
    now = dt.datetime.now(dt.UTC)
    return admin_async.JobInfo(
        job_id=job_id,
        queue="q",
        task="ok",
        state=state,
        attempt=1,
        max_attempts=5,
        priority=0,
        run_at=now,
        created_at=now,
        finished_at=None,
        result=None,
        errors=[],
        fence=fence,
    )


def test_a_refused_renewal_says_why_from_the_job_and_a_renewed_one_asks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        kept = hold(ledger, replace(row(1), fence=1))
        hold(ledger, replace(row(2), fence=1))
        hold(ledger, replace(row(3), fence=1))
        settling = hold(ledger, replace(row(4), fence=1))
        ledger.settle(settling, Complete())
        renewed = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=LEASE_SECONDS)
        queries.script("renew_many", [renewed, None, None, None])
        queries.script("get_job", job_info(2, "cancelled", 1), job_info(3, "running", 2))
        await renewal(queries, ledger).renew_all(CONN)
        assert queries.called("get_job") == [(2,), (3,)], "only refused running claims ask"
        assert kept.state is State.RUNNING and settling.state is State.SETTLING

    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        asyncio.run(test())
    lost = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lost job")]
    assert lost == [
        "lost job 2 (attempt 1): renewal refused: the job was cancelled",
        "lost job 3 (attempt 1): renewal refused: the job was claimed again (fence 2, "
        "this claim's 1)",
    ]


def test_one_locked_row_is_renewed_alone_and_kept_when_it_cannot_be() -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        locked = hold(ledger, row(1), safe_for=1.0)
        free = hold(ledger, row(2), safe_for=1.0)
        timeout = psycopg.errors.LockNotAvailable("lock timeout")
        queries.script("renew_many", timeout)
        queries.script("renew", timeout)
        await renewal(queries, ledger).renew_all(CONN)
        assert [args[0] for args in queries.called("renew")] == [1, 2]
        assert (locked.state, free.state) == (State.RUNNING, State.RUNNING)
        assert locked.safe_until < free.safe_until

    asyncio.run(test())


def test_a_lost_connection_is_left_to_the_reconnect_loop() -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        held = hold(ledger, row(1))
        queries.script("renew_many", psycopg.OperationalError("server closed"))
        with pytest.raises(psycopg.OperationalError):
            await renewal(queries, ledger).renew_all(CONN)
        assert held.state is State.RUNNING and queries.called("renew") == []

    asyncio.run(test())


def test_the_watchdog_gives_up_only_running_claims_past_their_safe_time() -> None:
    async def test() -> None:
        queries, ledger = FakeQueries(), Ledger("unit")
        expired = hold(ledger, row(1), safe_for=-1.0)
        fresh = hold(ledger, row(2))
        settling = hold(ledger, row(3), safe_for=-1.0)
        ledger.settle(settling, Complete())
        finished = asyncio.Event()
        watchdog = asyncio.create_task(renewal(queries, ledger, finished).watchdog())
        await asyncio.sleep(0.05)
        finished.set()
        await watchdog
        assert (expired.state, fresh.state, settling.state) == (
            State.LOST,
            State.RUNNING,
            State.SETTLING,
        )

    asyncio.run(test())


class Connection:
    """What reconnecting needs of a connection: close()."""

    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def test_the_reconnect_loop_backs_off_says_when_it_is_back_and_closes_each_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test() -> None:
        until = asyncio.Event()
        made: list[Connection] = []
        failures: list[BaseException] = [OSError("refused"), OSError("refused")]
        sessions: list[Connection] = []

        async def connect() -> Any:
            if failures:
                raise failures.pop(0)
            made.append(Connection())
            return made[-1]

        async def session(conn: Any) -> None:
            sessions.append(conn)
            if len(sessions) == 1:
                raise psycopg.OperationalError("server closed the connection")
            until.set()

        with caplog.at_level(logging.INFO, logger="taskboard.worker"):
            await reconnecting("test connection", connect, session, until=until, back="back")
        assert sessions == made and all(conn.closed for conn in made)
        messages = [r.getMessage() for r in caplog.records]
        assert messages == [
            "test connection failed (OSError: refused); retrying in 0.1s",
            "test connection failed (OSError: refused); retrying in 0.2s",
            "back",
            "test connection failed (OperationalError: server closed the connection); "
            "retrying in 0.1s",
            "back",
        ]

    asyncio.run(test())
