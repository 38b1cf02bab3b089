"""Concurrency beyond connections: `concurrency` bounds handlers, the pool bounds connections.

Plain handlers hold no connection, so a worker with pool_size 10 runs 200
of them at once, renews every lease, and never opens more than 10
connections. A transactional handler holds one of the pool_size - 2 handler
connections for its whole run; claims never take more jobs than there are
such connections free, so no job waits for one while its lease runs.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from taskboard import AsyncContext, Taskboard, load_settings
from taskboard.errors import ConfigError
from tests.support.database import MakeDatabase

DEADLINE_SECONDS = 120.0
POOL_SIZE = 10
LEASE = {"lease": 3.0, "renew_every": 1.0, "poll_interval": 0.2}


class ConnectionWatch:
    """Samples, in a thread, how many server connections carry `application_name`."""

    def __init__(self, url: str, application_name: str) -> None:
        self.url = url
        self.application_name = application_name
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                    [self.application_name],
                ).fetchone()
                self.peak = max(self.peak, int(row[0]) if row else 0)
                time.sleep(0.05)

    def __enter__(self) -> ConnectionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def jobs(url: str) -> list[tuple[str, int, int]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            (r[0], r[1], r[2])
            for r in conn.execute("SELECT state, attempt, fence FROM taskboard.jobs ORDER BY id")
        ]


@pytest.fixture
def url(make_database: MakeDatabase) -> Iterator[str]:
    yield make_database(deploy=True)


def run_worker(app: Taskboard, until: Callable[[], bool], **settings: Any) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, **settings))
        deadline = time.monotonic() + DEADLINE_SECONDS
        try:
            while not await asyncio.to_thread(until):
                assert not worker.done(), worker.result()
                assert time.monotonic() < deadline, "the jobs did not finish in time"
                await asyncio.sleep(0.2)
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)

    asyncio.run(main())


def test_two_hundred_plain_handlers_run_at_once_on_ten_connections(url: str) -> None:
    n = 200
    app = Taskboard(load_settings(database_url=url, worker_name="wide"))
    running = 0
    peak_running = 0
    all_in = asyncio.Event()

    @app.task("wait", queue="io")
    async def wait(ctx: AsyncContext, payload: Any) -> int:
        nonlocal running, peak_running
        running += 1
        peak_running = max(peak_running, running)
        if running == n:
            all_in.set()
        # Every handler stays until all 200 run, then past two more lease lengths:
        # only renewal keeps their leases.
        await asyncio.wait_for(all_in.wait(), DEADLINE_SECONDS)
        await asyncio.sleep(LEASE["lease"] * 2)
        running -= 1
        return int(payload["n"])

    app.enqueue_many("wait", [{"n": i} for i in range(n)], queue="io")
    settings = load_settings(database_url=url, worker_name="wide")
    with ConnectionWatch(url, settings.application_name) as watch:
        run_worker(
            app,
            lambda: all(state == "succeeded" for state, _, _ in jobs(url)),
            pool_size=POOL_SIZE,
            concurrency=n,
            **LEASE,
        )
    app.close()
    assert peak_running == n
    # Every job ran once, on its first claim: no lease was lost to a starved renewal.
    assert jobs(url) == [("succeeded", 1, 1)] * n
    assert 0 < watch.peak <= POOL_SIZE, watch.peak


def test_transactional_handlers_never_wait_for_a_connection(url: str) -> None:
    n = 30
    app = Taskboard(load_settings(database_url=url, worker_name="narrow"))
    holding = 0
    peak_holding = 0

    @app.task("ledger", queue="tx", transactional=True)
    async def ledger(ctx: AsyncContext, payload: Any) -> None:
        nonlocal holding, peak_holding
        holding += 1
        peak_holding = max(peak_holding, holding)
        assert ctx.conn is not None
        await ctx.conn.execute("SELECT pg_sleep(0.3)")
        holding -= 1

    app.enqueue_many("ledger", [{} for _ in range(n)], queue="tx")
    settings = load_settings(database_url=url, worker_name="narrow")
    with ConnectionWatch(url, settings.application_name) as watch:
        run_worker(
            app,
            lambda: all(state == "succeeded" for state, _, _ in jobs(url)),
            pool_size=POOL_SIZE,
            concurrency=50,
            **LEASE,
        )
    app.close()
    assert jobs(url) == [("succeeded", 1, 1)] * n
    # At most pool_size - 2 at once, each with a connection of its own from the start.
    assert 1 < peak_holding <= POOL_SIZE - 2
    assert watch.peak <= POOL_SIZE, watch.peak


def test_a_worker_with_a_transactional_task_runs_no_more_handlers_than_connections(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Plain handlers' still_holder() checks borrow handler connections: with concurrency
    beyond them, a transactional job could wait for one, its lease running. Such a
    worker runs at most pool_size - 2 handlers, and says so."""
    app = Taskboard(load_settings(database_url=url, worker_name="mixed"))
    running = 0
    peak = 0

    async def count(ctx: AsyncContext) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        assert await ctx.still_holder()
        await asyncio.sleep(0.1)
        running -= 1

    @app.task("plain", queue="mix")
    async def plain(ctx: AsyncContext, payload: Any) -> None:
        await count(ctx)

    @app.task("tx", queue="mix", transactional=True)
    async def tx(ctx: AsyncContext, payload: Any) -> None:
        await count(ctx)

    app.enqueue_many("plain", [{} for _ in range(20)], queue="mix")
    app.enqueue_many("tx", [{} for _ in range(5)], queue="mix")
    with caplog.at_level("WARNING", logger="taskboard.worker"):
        run_worker(
            app,
            lambda: all(state == "succeeded" for state, _, _ in jobs(url)),
            pool_size=5,
            concurrency=50,
            **LEASE,
        )
    app.close()
    assert jobs(url) == [("succeeded", 1, 1)] * 25
    assert 1 <= peak <= 3
    assert any(
        "concurrency 50 exceeds its 3 handler connections and a task is transactional" in r.message
        for r in caplog.records
    )


def test_concurrency_is_a_setting_with_bounds() -> None:
    settings = load_settings(database_url="postgresql:///x", pool_size=10)
    assert (settings.max_handlers, settings.handler_slots) == (8, 8)
    wide = load_settings(database_url="postgresql:///x", pool_size=10, concurrency=200)
    assert (wide.max_handlers, wide.handler_slots) == (200, 8)
    for bad in (0, -1, 10_001):
        with pytest.raises(ConfigError, match="TASKBOARD_CONCURRENCY"):
            load_settings(database_url="postgresql:///x", concurrency=bad)
