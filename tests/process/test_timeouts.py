"""The Python worker as real processes: handlers past their timeout.

Each test runs tests/apps/worker_app.py in subprocesses on a fresh database.
Leases are a few seconds long; the tests wait for conditions in the
database, the handlers' journal or the workers' logs, never for a fixed
time before an assertion, and assert no timings beyond "far below an
interval that would otherwise explain it".
"""

from __future__ import annotations

from tests.support.database import MakeDatabase
from tests.support.processes import (
    Workers,
    enqueue,
    wait_for_state,
)


def test_async_handler_past_its_timeout_is_cancelled_and_the_job_failed(
    make_database: MakeDatabase, workers: Workers
) -> None:
    url = make_database(deploy=True)
    job_id = enqueue(url, "slow", max_attempts=2)
    w = workers.start(url, "w")
    dead = wait_for_state(url, job_id, "dead")

    assert dead["attempt"] == 2
    errors = dead["errors"]
    assert [e["attempt"] for e in errors] == [1, 2]
    for e in errors:
        assert e["error"].startswith("TimeoutError"), e
        assert "timeout" in e["error"]
    cancelled = workers.journal.events("cancelled", job=job_id)
    assert [e["attempt"] for e in cancelled] == [1, 2]
    assert workers.journal.events("end", job=job_id) == []
    counts = w.terminate()
    assert (counts["claimed"], counts["failed"], counts["dead"]) == (2, 1, 1)


def test_sync_handler_past_its_timeout_is_failed_and_abandoned(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """The handler's thread sleeps on (600 s), the job is failed, and the
    worker still exits on SIGTERM without waiting for that thread."""
    url = make_database(deploy=True)
    job_id = enqueue(url, "slow_sync", max_attempts=1)
    w = workers.start(url, "w")
    dead = wait_for_state(url, job_id, "dead")

    assert dead["attempt"] == 1
    assert [e["error"].split(":")[0] for e in dead["errors"]] == ["TimeoutError"]
    assert workers.journal.events("start", job=job_id)
    counts = w.terminate()  # within EXIT_SECONDS, far below the thread's 600 s
    assert (counts["claimed"], counts["dead"], counts["succeeded"]) == (1, 1, 0)
    assert workers.journal.events("end", job=job_id) == []
