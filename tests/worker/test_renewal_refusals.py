"""What the holder's log says when its renewal is refused: a cancel from an admin while
the handler runs reads as a cancel, not only as "renewal refused"."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from taskboard import AsyncContext
from tests.support.database import MakeDatabase, connect
from tests.support.inprocess import job, make_app, run_worker_until


def test_a_cancel_while_the_handler_runs_is_logged_as_cancelled(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("long")
    async def long(ctx: AsyncContext, payload: Any) -> None:
        await asyncio.sleep(60)  # until the worker gives the claim up

    job_id = app.enqueue("long")
    cancelled: list[int] = []

    def lost_as_cancelled() -> bool:
        if not cancelled and job(url, job_id)["state"] == "running":
            with connect(url, "taskboard_admin") as admin:
                row = admin.execute("SELECT taskboard.cancel(%s)", [job_id]).fetchone()
            assert row == (True,)
            cancelled.append(job_id)
        return any(
            record.getMessage().startswith(f"lost job {job_id} (attempt 1): renewal refused")
            for record in caplog.records
        )

    with caplog.at_level(logging.WARNING, logger="taskboard"):
        run_worker_until(app, lost_as_cancelled)
    app.close()
    [line] = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith(f"lost job {job_id}")
    ]
    assert line == f"lost job {job_id} (attempt 1): renewal refused: the job was cancelled"
    assert job(url, job_id)["state"] == "cancelled"
