"""Worker processes of tests/apps/worker_app.py, the journal their handlers write, and the
job rows as the table owner sees them.

Tests wait for conditions in the database, the journal or the workers' logs,
never for a fixed time before an assertion.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from taskboard_dev import harness
from taskboard_dev.harness import WorkerProcess
from tests.support import TESTS_DIR

APP = TESTS_DIR / "apps" / "worker_app.py"
DEADLINE_SECONDS = 90.0  # how long any awaited condition may take on a loaded machine
EXIT_SECONDS = 60.0  # how long a signalled worker may take to exit
POLL_SECONDS = 0.05

# What a test worker runs with unless the test says otherwise: short leases
# so that reclaims happen within seconds.
FAST = {"lease": 3, "renew_every": 1, "pool_size": 3, "poll_interval": 0.2, "shutdown_grace": 5}

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T | None], what: str, timeout: float = DEADLINE_SECONDS
) -> T:
    """Poll `condition` until it returns something truthy and return that.

    Raises AssertionError naming `what` when the deadline passes first.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(POLL_SECONDS)


# -- the journal -------------------------------------------------------------------


class Journal(harness.Journal):
    """The events handlers of every worker process appended to one file."""

    def events(self, event: str | None = None, **match: Any) -> list[dict[str, Any]]:
        return self.records(**match) if event is None else self.records(event=event, **match)

    def wait_for(
        self, event: str, timeout: float = DEADLINE_SECONDS, **match: Any
    ) -> dict[str, Any]:
        """The first `event` line matching `match`, once it has been written."""
        found = wait_until(
            lambda: self.events(event, **match), f"journal event {event} {match}", timeout
        )
        return found[0]


# -- worker processes --------------------------------------------------------------


@dataclass
class Workers:
    """Starts worker processes for one test and ends those still running afterwards."""

    directory: Path
    started: list[WorkerProcess] = field(default_factory=list)

    @property
    def journal(self) -> Journal:
        return Journal(self.directory / "journal.jsonl")

    def start(
        self, url: str, name: str, *, gate: Path | None = None, **settings: Any
    ) -> WorkerProcess:
        """Start worker_app.py on database `url` as worker `name`.

        `settings` are TASKBOARD_* settings on top of FAST; `gate` makes its
        handlers wait for that file.
        """
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "TASKBOARD_DATABASE_URL": url,
                "TASKBOARD_WORKER_NAME": name,
                "WORKER_APP_JOURNAL": str(self.journal.path),
            }
        )
        if gate is not None:
            env["WORKER_APP_GATE"] = str(gate)
        for key, setting in {**FAST, **settings}.items():
            env[f"TASKBOARD_{key.upper()}"] = str(setting)
        worker = WorkerProcess.start(
            name, [sys.executable, str(APP)], log_path=self.directory / f"{name}.log", env=env
        )
        self.started.append(worker)
        return worker

    def close(self) -> None:
        for worker in self.started:
            worker.kill()
        for worker in self.started:
            print(f"----- log of worker {worker.name} (exit {worker.proc.returncode}) -----")
            print(worker.log())
        if self.journal.path.exists():
            print("----- journal -----")
            print(self.journal.path.read_text())


# -- the database, as its superuser ----------------------------------------------------


def job(url: str, job_id: int) -> dict[str, Any]:
    """The job's row as the table owner sees it, plus lease_expired (by the server clock)."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        row = conn.execute(
            "SELECT *, lease_expires_at < clock_timestamp() AS lease_expired"
            "  FROM taskboard.jobs WHERE id = %s",
            [job_id],
        ).fetchone()
    assert row is not None, f"no job {job_id}"
    return row


def wait_for_job(
    url: str,
    job_id: int,
    what: str,
    condition: Callable[[dict[str, Any]], bool],
    timeout: float = DEADLINE_SECONDS,
) -> dict[str, Any]:
    """The job's row once `condition(row)` holds."""

    def check() -> dict[str, Any] | None:
        row = job(url, job_id)
        return row if condition(row) else None

    try:
        return wait_until(check, f"job {job_id} to be {what}", timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it is {job(url, job_id)}") from None


def wait_for_state(
    url: str, job_id: int, state: str, timeout: float = DEADLINE_SECONDS
) -> dict[str, Any]:
    return wait_for_job(url, job_id, state, lambda row: row["state"] == state, timeout)


def wait_for_expiry(url: str, job_id: int) -> dict[str, Any]:
    """Wait until the job's lease deadline has passed on the server clock."""
    return wait_for_job(url, job_id, "past its lease", lambda row: bool(row["lease_expired"]))


def enqueue(url: str, task: str, payload: dict[str, Any] | None = None, **options: Any) -> int:
    """Enqueue one job on queue "default" with taskboard.enqueue; options are its named arguments."""
    names = ", ".join(f"{k} => %({k})s" for k in options)
    query = "SELECT taskboard.enqueue(task => %(task)s, payload => %(payload)s::jsonb"
    query += f", {names})" if names else ")"
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            query, {"task": task, "payload": json.dumps(payload or {}), **options}
        ).fetchone()
    assert row is not None
    return int(row[0])


def create_ledger(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE public.ledger ("
            " job_id bigint NOT NULL, token uuid NOT NULL, note text NOT NULL,"
            " at timestamptz NOT NULL DEFAULT clock_timestamp())"
        )


def ledger_rows(url: str, job_id: int) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT job_id, token, note FROM public.ledger WHERE job_id = %s ORDER BY at", [job_id]
        ).fetchall()


ADMIN = "taskboard_admin"
LEASE_SECONDS = FAST["lease"]


def effects(journal: Journal, job_id: int) -> list[dict[str, Any]]:
    return journal.events("effect", job=job_id)


def worker_backends(url: str, name: str) -> list[tuple[str, str]]:
    """(state, query) of every connection worker `name` has open."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            (r[0], r[1])
            for r in conn.execute(
                "SELECT state, query FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                [f"taskboard {name}"],
            ).fetchall()
        ]


def idle_after_claim(url: str, name: str) -> bool:
    return any(
        state == "idle" and "taskboard.claim" in query
        for state, query in worker_backends(url, name)
    )
