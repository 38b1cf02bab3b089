"""The Python worker as real processes: the connections it holds, NOTIFY and polling.

Each test runs tests/apps/worker_app.py in subprocesses on a fresh database.
Leases are a few seconds long; the tests wait for conditions in the
database, the handlers' journal or the workers' logs, never for a fixed
time before an assertion, and assert no timings beyond "far below an
interval that would otherwise explain it".
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.database import MakeDatabase
from tests.support.processes import (
    Workers,
    create_ledger,
    enqueue,
    idle_after_claim,
    wait_for_job,
    wait_for_state,
    wait_until,
    worker_backends,
)


def test_idle_worker_holds_its_own_two_connections_and_never_more_than_pool_size(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """Handler connections are opened when a handler needs one, up to pool_size - 2."""
    url = make_database(deploy=True)
    create_ledger(url)
    gate = workers.directory / "gate"
    w = workers.start(url, "w", pool_size=5)
    wait_until(lambda: idle_after_claim(url, "w"), "the worker's first claim")
    assert len(worker_backends(url, "w")) == 2
    jobs = [enqueue(url, "ledger", {"gate": str(gate)}) for _ in range(5)]
    wait_until(lambda: len(workers.journal.events("start")) == 3, "three handlers at once")
    assert len(worker_backends(url, "w")) == 5
    gate.touch()
    for job_id in jobs:
        wait_for_job(url, job_id, "succeeded", lambda r: r["state"] == "succeeded")
        assert len(worker_backends(url, "w")) <= 5
    w.terminate()


NOTIFY_DEADLINE_SECONDS = 10  # far below the poll interval of 30 s


@pytest.mark.parametrize("listen", ["same connection", "listen_url"])
def test_notify_wakes_an_idle_worker_long_before_its_poll_interval(
    make_database: MakeDatabase, workers: Workers, listen: str
) -> None:
    url = make_database(deploy=True)
    settings: dict[str, Any] = {"poll_interval": 30}
    if listen == "listen_url":
        # Another URL, so a connection of its own, as behind PgBouncer.
        settings["listen_url"] = url + ("&" if "?" in url else "?") + "connect_timeout=10"
    workers.start(url, "w", **settings)
    wait_until(lambda: idle_after_claim(url, "w"), "the worker to claim once and idle")
    if listen == "listen_url":
        wait_until(
            lambda: ("idle", "LISTEN taskboard") in worker_backends(url, "w"),
            "the listen_url connection to LISTEN",
        )

    job_id = enqueue(url, "work")
    workers.journal.wait_for("start", job=job_id, timeout=NOTIFY_DEADLINE_SECONDS)
    wait_for_state(url, job_id, "succeeded")


def test_poll_only_worker_finds_jobs_by_polling(
    make_database: MakeDatabase, workers: Workers
) -> None:
    url = make_database(deploy=True)
    w = workers.start(url, "w", listen_url="none", poll_interval=0.5)
    wait_until(lambda: idle_after_claim(url, "w"), "the worker's first claim")
    assert all("LISTEN" not in query for _, query in worker_backends(url, "w"))
    job_id = enqueue(url, "work")
    wait_for_state(url, job_id, "succeeded")
    assert w.terminate()["succeeded"] == 1


def test_a_second_cycle_has_a_connection_of_its_own_beyond_pool_size(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """cycles_in_flight = 2: three connections of the worker's own, each claim for at most
    half the handlers, and never more than pool_size + 1 connections."""
    url = make_database(deploy=True)
    create_ledger(url)
    gate = workers.directory / "gate"
    w = workers.start(url, "w", pool_size=6, cycles_in_flight=2)
    wait_until(lambda: len(worker_backends(url, "w")) == 3, "three connections of its own")
    jobs = [enqueue(url, "ledger", {"gate": str(gate)}) for _ in range(6)]
    wait_until(lambda: len(workers.journal.events("start")) == 4, "four handlers at once")
    assert len(worker_backends(url, "w")) == 7
    gate.touch()
    for job_id in jobs:
        wait_for_job(url, job_id, "succeeded", lambda r: r["state"] == "succeeded")
        assert len(worker_backends(url, "w")) <= 7
    w.terminate()
