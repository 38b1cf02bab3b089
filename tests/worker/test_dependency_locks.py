"""No login stalls another's jobs through depends_on: a producer's transaction that
names a running job in depends_on and stays open for three leases holds nothing that
job's holder waits for (its renewals and its completion go through, it runs once),
and a transactional handler may enqueue, on ctx.conn, a follow-up that depends on its
own job. The dependents run after their dependency's accepted completion."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import psycopg

from taskboard import AsyncContext, JobEvent
from tests.support.database import MakeDatabase, connect
from tests.support.inprocess import DEADLINE_SECONDS, job, make_app, worker_running

LEASE_S = 2.0
RENEW_EVERY_S = 0.5
HELD_S = 3 * LEASE_S  # how long the producer's transaction stays open


async def wait_for(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def succeeded(url: str, job_id: int) -> bool:
    """Whether the job exists (its transaction committed) and succeeded."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]).fetchone()
    return row == ("succeeded",)


def events(seen: list[JobEvent], kind: str, job_id: int) -> list[JobEvent]:
    return [e for e in seen if e.kind == kind and e.job_id == job_id]


def test_an_open_enqueue_naming_a_running_job_stalls_none_of_its_holders_writes(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    seen: list[JobEvent] = []
    app.on_event(seen.append)
    started = asyncio.Event()
    release = asyncio.Event()
    ran: list[str] = []

    @app.task("export", queue="reports")
    async def export(ctx: AsyncContext, payload: Any) -> str:
        ran.append("export")
        started.set()
        await release.wait()
        return "exported"

    @app.task("notify", queue="reports")
    async def notify(ctx: AsyncContext, payload: Any) -> None:
        ran.append("notify")

    async def main() -> tuple[int, int]:
        job_id = app.enqueue("export", max_attempts=1)  # a lost lease would end it dead
        async with worker_running(app, lease=LEASE_S, renew_every=RENEW_EVERY_S):
            await asyncio.wait_for(started.wait(), DEADLINE_SECONDS)
            # The lowest role, in a transaction it keeps open for three leases.
            producer = connect(url, "taskboard_producer", autocommit=False)
            try:
                row = producer.execute(
                    "SELECT taskboard.enqueue('notify', '{}', 'reports', depends_on => %s)",
                    [[job_id]],
                ).fetchone()
                assert row is not None
                dependent = int(row[0])
                held_until = time.monotonic() + HELD_S
                while time.monotonic() < held_until:
                    await asyncio.sleep(0.2)
                renewed = [e.answer for e in events(seen, "renewed", job_id)]
                assert len(renewed) >= HELD_S / RENEW_EVERY_S / 2, renewed
                assert None not in renewed, "a renewal was refused"
                # The job ends while the producer's transaction is still open.
                release.set()
                await wait_for(lambda: events(seen, "settled", job_id), "the completion")
            finally:
                producer.commit()
                producer.close()
            # The dependent's edge was not committed when its dependency ended: a later
            # claim of the worker settles it, and the worker runs it.
            await wait_for(lambda: succeeded(url, dependent), "the dependent")
        return job_id, dependent

    try:
        job_id, dependent = asyncio.run(main())
    finally:
        app.close()
    assert [e.answer for e in events(seen, "settled", job_id)] == [True]
    assert events(seen, "lost", job_id) == []
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("succeeded", 1)
    assert ran == ["export", "notify"]
    assert job(url, dependent)["started_at"] >= row["finished_at"]


def test_a_transactional_handler_enqueues_a_follow_up_depending_on_its_own_job(
    make_database: MakeDatabase,
) -> None:
    """Its transaction holds the follow-up's edge to its own job, and nothing its own
    renewals wait for: it renews through a handler longer than its lease, completes on
    the same connection, and the follow-up is released by that completion."""
    url = make_database(deploy=True)
    app = make_app(url)
    seen: list[JobEvent] = []
    app.on_event(seen.append)
    follow_ups: list[int] = []

    @app.task("charge", queue="billing", transactional=True)
    async def charge(ctx: AsyncContext, payload: Any) -> str:
        assert ctx.conn is not None
        follow_ups.append(
            await app.aenqueue(
                "receipt", {"for": ctx.job_id}, conn=ctx.conn, depends_on=[ctx.job_id]
            )
        )
        await asyncio.sleep(HELD_S)  # three leases, renewed all along
        return "charged"

    @app.task("receipt", queue="billing")
    async def receipt(ctx: AsyncContext, payload: Any) -> None:
        pass

    async def main() -> int:
        job_id = app.enqueue("charge", max_attempts=1)
        async with worker_running(app, lease=LEASE_S, renew_every=RENEW_EVERY_S):
            await wait_for(lambda: follow_ups, "the follow-up")
            await wait_for(lambda: succeeded(url, follow_ups[0]), "the follow-up to run")
        return job_id

    try:
        job_id = asyncio.run(main())
    finally:
        app.close()
    assert [e.answer for e in events(seen, "settled", job_id)] == [True]
    assert events(seen, "lost", job_id) == []
    renewed = [e.answer for e in events(seen, "renewed", job_id)]
    assert len(renewed) >= HELD_S / RENEW_EVERY_S / 2 and None not in renewed, renewed
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("succeeded", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        edges = conn.execute("SELECT count(*) FROM taskboard.job_dependencies").fetchone()
    assert edges == (0,)
