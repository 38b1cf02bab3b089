"""The Python worker as real processes: shutdown on a signal, its grace, a second signal.

Each test runs tests/apps/worker_app.py in subprocesses on a fresh database.
Leases are a few seconds long; the tests wait for conditions in the
database, the handlers' journal or the workers' logs, never for a fixed
time before an assertion, and assert no timings beyond "far below an
interval that would otherwise explain it".
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.database import MakeDatabase
from tests.support.processes import (
    Workers,
    enqueue,
    job,
)


@pytest.mark.parametrize("task", ["work", "work_sync", "stubborn"])
def test_shutdown_releases_a_job_whose_handler_outlives_the_grace(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path, task: str
) -> None:
    url = make_database(deploy=True)
    job_id = enqueue(url, task)
    w = workers.start(url, "w", gate=tmp_path / "never", shutdown_grace=1)
    workers.journal.wait_for("start", job=job_id)

    counts = w.terminate()
    assert (counts["claimed"], counts["released"], counts["succeeded"], counts["lost"]) == (
        1,
        1,
        0,
        0,
    )
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("queued", 0)  # the claim was not counted
    assert workers.journal.events("effect", job=job_id) == []
    if task == "stubborn":  # it ignored its cancellation and was left behind
        assert workers.journal.events("cancelled", job=job_id)
        assert "ignored their cancellation; exiting without them" in w.log()


def test_second_signal_during_the_grace_exits_at_once(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    url = make_database(deploy=True)
    job_id = enqueue(url, "work")
    w = workers.start(url, "w", gate=tmp_path / "never", shutdown_grace=600)
    workers.journal.wait_for("start", job=job_id)

    w.send(signal.SIGTERM)
    w.wait_for_log("worker w stopping: waiting up to 600s for 1 handler(s)")
    w.send(signal.SIGTERM)
    assert w.wait_exit() == 130  # far below the 600 s grace
    assert "stopped:" not in w.log()
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("running", 1)  # left to expire, not released
