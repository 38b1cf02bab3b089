"""Regressions: errors and results the database refuses; pool connections a restart killed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import AsyncContext
from taskboard.worker.outcomes import MAX_RESULT_BYTES
from tests.support.database import MakeDatabase
from tests.support.inprocess import finished, job, make_app, only_error, run_worker_until
from tests.support.processes import (
    Workers,
    create_ledger,
    enqueue,
    idle_after_claim,
    wait_for_job,
    wait_until,
    worker_backends,
)


def test_handler_raising_timeouterror_without_a_task_timeout_fails_the_job(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("calls_upstream")
    async def calls_upstream(ctx: AsyncContext, payload: Any) -> None:
        raise TimeoutError("upstream did not answer")

    job_id = app.enqueue("calls_upstream", max_attempts=1)
    run_worker_until(app, finished(url, job_id))
    assert only_error(url, job_id) == "TimeoutError: upstream did not answer"


TOO_LARGE = "x" * (MAX_RESULT_BYTES + 1)


@pytest.mark.parametrize(
    "result",
    [float("nan"), {"ratio": float("inf")}, "nul \x00 inside", "lone \udc80", TOO_LARGE],
    ids=["nan", "inf", "nul", "surrogate", "too-large"],
)
def test_result_that_cannot_be_stored_never_runs_the_work_again(
    make_database: MakeDatabase, result: Any
) -> None:
    """The handler succeeded: its job completes once, with a note of why its result is missing."""
    url = make_database(deploy=True)
    app = make_app(url)
    runs: list[int] = []

    @app.task("odd")
    async def odd(ctx: AsyncContext, payload: Any) -> Any:
        runs.append(ctx.attempt)
        return result

    @app.task("fine")
    async def fine(ctx: AsyncContext, payload: Any) -> str:
        return "ok"

    bad = app.enqueue("odd", max_attempts=3)
    run_worker_until(app, finished(url, bad))
    row = job(url, bad)
    assert (row["state"], row["attempt"], row["errors"]) == ("succeeded", 1, []), row
    assert set(row["result"]) == {"taskboard_result_not_stored"}, row["result"]
    assert runs == [1]
    good = app.enqueue("fine")
    run_worker_until(app, finished(url, good))
    assert job(url, good)["result"] == "ok"


def test_exception_message_with_a_nul_byte_fails_the_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("nul_error")
    async def nul_error(ctx: AsyncContext, payload: Any) -> None:
        raise ValueError("bad byte \x00 here")

    job_id = app.enqueue("nul_error", max_attempts=1)
    run_worker_until(app, finished(url, job_id))
    assert only_error(url, job_id).startswith("ValueError: bad byte")


# -- process level --------------------------------------------------------------------


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    started = Workers(tmp_path)
    try:
        yield started
    finally:
        started.close()


def test_dropped_connections_do_not_fail_the_next_transactional_job(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """After a server restart, failover or idle-connection reaper, every idle
    handler-pool connection is dead; the worker hands them to transactional
    handlers anyway, and each such job loses an attempt."""
    url = make_database(deploy=True)
    create_ledger(url)
    w = workers.start(url, "w", pool_size=4)
    wait_until(lambda: idle_after_claim(url, "w"), "the worker's first claim")
    # Two transactional jobs at once leave two idle connections in the handler pool.
    gate = workers.directory / "gate"
    first = [enqueue(url, "ledger", {"gate": str(gate)}) for _ in range(2)]
    wait_until(lambda: len(worker_backends(url, "w")) == 4, "four connections")
    gate.touch()
    for job_id in first:
        wait_for_job(url, job_id, "succeeded", lambda r: r["state"] == "succeeded")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'taskboard w'"
        )
    w.wait_for_log("control connection back")
    jobs = [enqueue(url, "ledger", max_attempts=1) for _ in range(2)]
    for job_id in jobs:
        row = wait_for_job(url, job_id, "finished", lambda r: r["state"] in ("succeeded", "dead"))
        assert row["state"] == "succeeded", row["errors"]


# -- found by the soak: outcomes of finished handlers --------------------------------


@pytest.mark.parametrize("repro", ["dropped_completion", "lost_after_settle"])
def test_a_finished_handlers_outcome_is_sent_not_dropped_when_its_lease_runs_out(
    repro: str,
) -> None:
    """dropped_completion: a handler that finished during an outage ran a second time,
    because the worker gave up the job and dropped its pending completion.
    lost_after_settle: a renewal racing the worker's own fail counted the job lost.
    Each script starts its own server and exits 1 when the old behaviour shows."""
    done = subprocess.run(
        [sys.executable, "-m", f"soak.repro.{repro}"],
        check=False,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
