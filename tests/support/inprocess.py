"""A worker in this process, run until a condition on the database holds."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
from psycopg.rows import dict_row

from taskboard import Taskboard, load_settings

DEADLINE_SECONDS = 90.0
FAST: dict[str, Any] = {"pool_size": 3, "lease": 3, "renew_every": 1, "poll_interval": 0.2}


def make_app(url: str) -> Taskboard:
    return Taskboard(load_settings(database_url=url, worker_name="inproc"))


def job(url: str, job_id: int) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        row = conn.execute("SELECT * FROM taskboard.jobs WHERE id = %s", [job_id]).fetchone()
    assert row is not None, f"no job {job_id}"
    return row


def finished(url: str, *job_ids: int) -> Callable[[], bool]:
    def check() -> bool:
        return all(job(url, j)["state"] in ("succeeded", "dead", "cancelled") for j in job_ids)

    return check


def run_worker_until(app: Taskboard, condition: Callable[[], bool], **overrides: Any) -> None:
    """Run a worker until `condition()` (asked in a thread) holds, then stop it gracefully."""

    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, **{**FAST, **overrides}))
        deadline = time.monotonic() + DEADLINE_SECONDS
        try:
            while not await asyncio.to_thread(condition):
                if worker.done():
                    worker.result()
                    raise AssertionError("the worker ended by itself")
                if time.monotonic() > deadline:
                    raise AssertionError(f"the condition did not hold within {DEADLINE_SECONDS:g}s")
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)

    asyncio.run(main())


def only_error(url: str, job_id: int) -> str:
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("dead", 1), row
    assert len(row["errors"]) == 1, row["errors"]
    assert row["errors"][0]["attempt"] == 1
    assert row["errors"][0]["worker"] == "inproc"
    return str(row["errors"][0]["error"])


@contextlib.asynccontextmanager
async def worker_running(app: Taskboard, **overrides: Any) -> AsyncIterator[None]:
    """A worker of `app` on this loop for the duration of the block, then stopped gracefully."""
    stop = asyncio.Event()
    task = asyncio.create_task(app.worker(stop=stop, **{**FAST, **overrides}))
    try:
        yield
        if task.done():
            task.result()
            raise AssertionError("the worker ended by itself")
    finally:
        stop.set()
        await asyncio.wait_for(task, DEADLINE_SECONDS)
