"""Statement deadlines on a real server: a statement not answered in time drops its
connection at once, without a cancel request, and one answered in time is left alone; a
worker that stops holding jobs it could not settle says so by raising."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
import pytest

from taskboard import Taskboard, UnsettledJobs, load_settings
from taskboard.connections import Deadline, NoAnswer
from taskboard.sql import worker as sql_worker
from tests.support.database import MakeDatabase
from tests.support.inprocess import FAST
from tests.support.processes import wait_until

SLEEP_SECONDS = 30  # far beyond every deadline below
DEADLINE_SECONDS = 0.5
DROPPED_WITHIN_SECONDS = 5.0  # far below SLEEP_SECONDS


def test_a_sync_statement_past_its_deadline_drops_the_connection(server_url: str) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        began = time.monotonic()
        dropped = r"no answer from .* within 0\.5s: connection dropped"
        with pytest.raises(NoAnswer, match=dropped), Deadline(conn, DEADLINE_SECONDS):
            conn.execute("SELECT pg_sleep(%s)", [SLEEP_SECONDS])
        assert time.monotonic() - began < DROPPED_WITHIN_SECONDS
        assert conn.broken


def test_an_async_statement_past_its_deadline_drops_the_connection(server_url: str) -> None:
    async def main() -> None:
        async with await psycopg.AsyncConnection.connect(server_url, autocommit=True) as conn:
            began = time.monotonic()
            with pytest.raises(NoAnswer):
                async with Deadline(conn, DEADLINE_SECONDS):
                    await conn.execute("SELECT pg_sleep(%s)", [SLEEP_SECONDS])
            assert time.monotonic() - began < DROPPED_WITHIN_SECONDS
            assert conn.broken

    asyncio.run(main())


def test_a_statement_answered_in_time_keeps_its_connection(server_url: str) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        for _ in range(3):
            with Deadline(conn, DEADLINE_SECONDS):
                assert conn.execute("SELECT 1").fetchone() == (1,)
        time.sleep(DEADLINE_SECONDS * 2)  # past every deadline: none fires late
        assert conn.execute("SELECT 2").fetchone() == (2,)
        assert not conn.broken


def test_enqueue_past_its_deadline_raises_and_the_next_one_works(
    make_database: MakeDatabase,
) -> None:
    """A producer whose statement is not answered in time gets an error, not a hang, and
    its next enqueue goes through on a new connection."""
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url, statement_deadline=DEADLINE_SECONDS))
    locker = psycopg.connect(url)
    try:
        locker.execute("LOCK TABLE taskboard.jobs IN ACCESS EXCLUSIVE MODE")
        began = time.monotonic()
        with pytest.raises(NoAnswer):
            app.enqueue("work", {"n": 1})
        assert time.monotonic() - began < DROPPED_WITHIN_SECONDS
    finally:
        locker.rollback()
        locker.close()
    job_id = app.enqueue("work", {"n": 2})
    job = app.get_job(job_id)
    assert job is not None and job.state == "queued"
    app.close()


def state_of(app: Taskboard, job_id: int) -> str | None:
    job = app.get_job(job_id)
    return None if job is None else job.state


class ReleaseNeverAnswered(sql_worker.Queries):
    """A release the database never answers (its connection breaks each time)."""

    async def release(self, conn: psycopg.AsyncConnection[Any], *args: Any) -> bool:
        raise psycopg.OperationalError("server closed the connection unexpectedly")


def test_a_worker_that_stops_holding_unsettled_jobs_raises(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url))
    gate = asyncio.Event()

    @app.task("stuck")
    async def stuck(ctx: Any, payload: Any) -> None:
        await gate.wait()

    job_id = app.enqueue("stuck", {"key": uuid.uuid4().hex})

    async def main() -> None:
        stop = asyncio.Event()
        run = asyncio.create_task(
            app.worker(stop=stop, queries=ReleaseNeverAnswered(), **{**FAST, "shutdown_grace": 0})
        )
        await asyncio.to_thread(
            wait_until, lambda: state_of(app, job_id) == "running", "the job to run"
        )
        stop.set()
        with pytest.raises(UnsettledJobs, match="stopped holding 1 job"):
            await run

    asyncio.run(main())
