"""The Python worker as real processes against real PostgreSQL: stalls, kills, signals.

Each test runs tests/apps/worker_app.py in subprocesses on a fresh database.
Leases are a few seconds long; the tests wait for conditions in the
database, the handlers' journal or the workers' logs, never for a fixed
time before an assertion, and assert no timings beyond "far below an
interval that would otherwise explain it".

The module ends with a restart of PostgreSQL, on a private server of its
own. The harness comes first: worker processes, the handlers' journal, and
the job rows as the superuser sees them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg.rows import dict_row

from sqlhelpers import connect, expire, value
from taskboard_dev import devdb

# -- harness ----------------------------------------------------------------------

APP = Path(__file__).parent / "apps" / "worker_app.py"
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


@dataclass
class Journal:
    """The events handlers of every worker process appended to one file."""

    path: Path

    def events(self, event: str | None = None, **match: Any) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found = []
        for line in self.path.read_text().splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if event is not None and entry["event"] != event:
                continue
            if all(entry.get(k) == v for k, v in match.items()):
                found.append(entry)
        return found

    def wait_for(
        self, event: str, timeout: float = DEADLINE_SECONDS, **match: Any
    ) -> dict[str, Any]:
        """The first `event` line matching `match`, once it has been written."""
        found = wait_until(
            lambda: self.events(event, **match), f"journal event {event} {match}", timeout
        )
        return found[0]


# -- worker processes --------------------------------------------------------------


COUNTERS_LINE = re.compile(r"worker (\S+) stopped: (.*)$", re.MULTILINE)


@dataclass
class WorkerProcess:
    """One `python tests/apps/worker_app.py` process and its log."""

    name: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    stopped: bool = False  # SIGSTOPped

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_for_log(self, text: str, timeout: float = DEADLINE_SECONDS) -> None:
        def seen() -> bool:
            if text in self.log():
                return True
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"worker {self.name} exited ({self.proc.returncode}) before logging {text!r}:\n"
                    + self.log()
                )
            return False

        wait_until(seen, f"worker {self.name} to log {text!r}", timeout)

    def send(self, signum: int) -> None:
        os.kill(self.pid, signum)
        if signum == signal.SIGSTOP:
            self.stopped = True
        elif signum == signal.SIGCONT:
            self.stopped = False

    def wait_exit(self, timeout: float = EXIT_SECONDS) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"worker {self.name} did not exit within {timeout:g}s:\n{self.log()}"
            ) from None

    def terminate(self, timeout: float = EXIT_SECONDS) -> dict[str, int]:
        """SIGTERM, wait for a clean exit, and return the counters it logged."""
        self.send(signal.SIGTERM)
        status = self.wait_exit(timeout)
        assert status == 0, f"worker {self.name} exited with {status}:\n{self.log()}"
        return self.counters()

    def counters(self) -> dict[str, int]:
        """The counters of the "worker NAME stopped: k=v ..." line."""
        match = COUNTERS_LINE.search(self.log())
        assert match is not None, f"worker {self.name} logged no counters:\n{self.log()}"
        return {k: int(v) for k, v in (pair.split("=") for pair in match.group(2).split())}

    def kill(self) -> None:
        """Make sure the process is gone (test teardown)."""
        if self.proc.poll() is None:
            if self.stopped:
                os.kill(self.pid, signal.SIGCONT)
            self.proc.kill()
        self.proc.wait()


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
        log_path = self.directory / f"{name}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(APP)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        worker = WorkerProcess(name, proc, log_path)
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


# -- tests ------------------------------------------------------------------------

MakeDatabase = Callable[..., str]  # the conftest fixture: make_database(deploy=True) -> URL
ADMIN = "taskboard_admin"
LEASE_SECONDS = FAST["lease"]


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    """Starts worker processes; afterwards ends those still running and prints every log."""
    started = Workers(tmp_path)
    try:
        yield started
    finally:
        started.close()


def effects(journal: Journal, job_id: int) -> list[dict[str, Any]]:
    return journal.events("effect", job=job_id)


def test_stale_worker_cannot_complete_after_reclaim(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """The story: A stalls holding Maya's email job, B reclaims and sends it,
    A resumes, "sends" too, and its completion is refused.

    A's lease is made to run out by moving its deadline (principle 2); A
    itself runs with a lease so long that its own watchdog and renewer stay
    quiet, so that A really gets as far as calling complete with its stale
    token. (With a short lease A gives the job up first: next test.)
    """
    url = make_database(deploy=True)
    job_id = enqueue(url, "work", {"to": "maya@example.com"})
    a_may_send = tmp_path / "a-may-send"
    a = workers.start(url, "worker-a", gate=a_may_send, lease=600, renew_every=300)
    claim_a = workers.journal.wait_for("start", job=job_id)
    assert claim_a["worker"] == "worker-a" and claim_a["attempt"] == 1

    a.send(signal.SIGSTOP)
    expire(url, job_id)
    assert job(url, job_id)["lease_expired"]

    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    claim_b = workers.journal.wait_for("effect", job=job_id, worker="worker-b")
    assert claim_b["attempt"] == 2
    assert str(done["lease_token"]) == claim_b["token"] != claim_a["token"]

    a_may_send.touch()
    a.send(signal.SIGCONT)
    a.wait_for_log(f"complete of job {job_id} (attempt 1) refused")

    # What the database cannot fence: A "sent" the email too, after B.
    sent = effects(workers.journal, job_id)
    assert [(e["worker"], e["attempt"]) for e in sent] == [("worker-b", 2), ("worker-a", 1)]
    # Nothing A did changed the job.
    after = job(url, job_id)
    assert (after["state"], after["attempt"], after["result"], after["finished_at"]) == (
        "succeeded",
        2,
        done["result"],
        done["finished_at"],
    )
    assert after["result"]["token"] == claim_b["token"]

    a_counts = a.terminate()
    assert (a_counts["claimed"], a_counts["succeeded"], a_counts["stale"], a_counts["lost"]) == (
        1,
        0,
        1,
        0,
    )
    b_counts = b.terminate()
    assert (b_counts["claimed"], b_counts["succeeded"]) == (1, 1)


def test_stalled_worker_past_its_lease_gives_the_job_up_and_sends_nothing(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """A is SIGSTOPped until its lease has run out on the server clock and B
    has completed the job. When A resumes it neither succeeds nor "sends":
    its watchdog or renewal gives the job up (the handler is cancelled), or
    the handler's holder check right before the effect says no and A's
    completion is then refused.
    """
    url = make_database(deploy=True)
    job_id = enqueue(url, "work", {"check_holder": True})
    a_may_send = tmp_path / "a-may-send"
    a = workers.start(url, "worker-a", gate=a_may_send)
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGSTOP)
    wait_for_expiry(url, job_id)
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2

    a_may_send.touch()
    a.send(signal.SIGCONT)
    wait_until(
        lambda: (
            f"lost job {job_id} (attempt 1)" in a.log()
            or f"complete of job {job_id} (attempt 1) refused" in a.log()
        ),
        "worker A to give the job up or be refused",
    )
    a_counts = a.terminate()
    assert a_counts["succeeded"] == 0
    assert a_counts["lost"] + a_counts["stale"] == 1
    a_events = [e["event"] for e in workers.journal.events(token=claim_a["token"])]
    assert a_events in (["start", "cancelled"], ["start", "skipped"]), a_events

    sent = effects(workers.journal, job_id)
    assert [(e["worker"], e["attempt"]) for e in sent] == [("worker-b", 2)]
    assert job(url, job_id)["result"]["token"] == sent[0]["token"]
    assert b.terminate()["succeeded"] == 1


def test_killed_worker_job_is_reclaimed_and_completed_once(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """kill -9 in the middle of a handler: after the lease another worker
    reclaims the job and completes it once."""
    url = make_database(deploy=True)
    job_id = enqueue(url, "work")
    a = workers.start(url, "worker-a", gate=tmp_path / "never")
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGKILL)
    assert a.wait_exit() == -signal.SIGKILL
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")

    assert done["attempt"] == 2
    sent = effects(workers.journal, job_id)
    assert len(sent) == 1
    assert sent[0]["worker"] == "worker-b"
    assert sent[0]["token"] == str(done["lease_token"]) == done["result"]["token"]
    assert sent[0]["token"] != claim_a["token"]
    counts = b.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"], counts["stale"]) == (1, 1, 0, 0)


def test_renewal_keeps_transactional_handlers_leases_while_they_hold_every_pool_connection(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """The reserve: with pool_size=4 there are two handler slots. Two
    transactional handlers each hold their pool connection in an open
    transaction for four leases; renewal has a connection of its own, so a
    competitor claiming the same queue the whole time gets nothing."""
    url = make_database(deploy=True)
    create_ledger(url)
    jobs = [enqueue(url, "ledger", {"watch": True}) for _ in range(2)]
    gate = tmp_path / "let-go"
    holder = workers.start(url, "holder", gate=gate, pool_size=4)
    tokens = {j: workers.journal.wait_for("start", job=j)["token"] for j in jobs}
    competitor = workers.start(url, "competitor", poll_interval=0.1)
    competitor.wait_for_log("worker competitor started")

    end = time.monotonic() + 4 * LEASE_SECONDS
    while time.monotonic() < end:
        for j in jobs:
            row = job(url, j)
            assert (row["state"], row["attempt"], str(row["lease_token"])) == (
                "running",
                1,
                tokens[j],
            )
            assert not row["lease_expired"], f"job {j}'s lease ran out while its handler held it"
        time.sleep(0.2)
    gate.touch()

    for j in jobs:
        done = wait_for_state(url, j, "succeeded")
        assert done["attempt"] == 1
        assert [str(r["token"]) for r in ledger_rows(url, j)] == [tokens[j]]
    assert workers.journal.events("not_holder") == []
    assert competitor.terminate()["claimed"] == 0
    counts = holder.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"]) == (2, 2, 0)


@pytest.mark.parametrize("how", ["refused", "expired"])
def test_stale_transactional_handler_writes_vanish(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path, how: str
) -> None:
    """A transactional handler's ledger row commits only with its completion.

    A inserts its row and stalls (SIGSTOP); its lease runs out; B reclaims,
    inserts its own row and completes. When A resumes, its row does not
    survive: "refused" moves A's deadline (A runs with a long lease, so it
    gets to call complete, which returns false and rolls back); "expired"
    lets the lease run out on the server clock (A gives the job up, or is
    refused, and rolls back either way).
    """
    url = make_database(deploy=True)
    create_ledger(url)
    job_id = enqueue(url, "ledger")
    a_go = tmp_path / "a-go"
    slow = {"lease": 600, "renew_every": 300} if how == "refused" else {}
    a = workers.start(url, "worker-a", gate=a_go, **slow)
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGSTOP)
    if how == "refused":
        expire(url, job_id)
    else:
        wait_for_expiry(url, job_id)
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    token_b = str(done["lease_token"])
    assert [(str(r["token"]), r["note"]) for r in ledger_rows(url, job_id)] == [
        (token_b, "worker-b")
    ]

    a_go.touch()
    a.send(signal.SIGCONT)
    refused = f"complete of job {job_id} (attempt 1) refused"
    if how == "refused":
        a.wait_for_log(refused)
    else:
        wait_until(
            lambda: refused in a.log() or f"lost job {job_id} (attempt 1)" in a.log(),
            "worker A to give the job up or be refused",
        )
    a_counts = a.terminate()
    assert a_counts["succeeded"] == 0
    assert a_counts["stale"] + a_counts["lost"] == 1
    if how == "refused":
        assert a_counts["stale"] == 1
        assert workers.journal.events("effect", token=claim_a["token"])  # it got that far

    rows = ledger_rows(url, job_id)
    assert [(str(r["token"]), r["note"]) for r in rows] == [(token_b, "worker-b")]
    assert job(url, job_id)["result"]["token"] == token_b
    assert b.terminate()["succeeded"] == 1


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


@pytest.mark.parametrize("task", ["work", "work_sync"])
def test_cancelled_job_is_lost_and_never_settled(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path, task: str
) -> None:
    """An admin cancels a running job: renewal is refused, ctx.lost turns
    true, an async handler is cancelled, and the worker neither completes
    nor fails the job."""
    url = make_database(deploy=True)
    job_id = enqueue(url, task)
    w = workers.start(url, "w", gate=tmp_path / "never")
    workers.journal.wait_for("start", job=job_id)

    with connect(url, ADMIN) as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [job_id]) is True
    w.wait_for_log(f"lost job {job_id} (attempt 1): renewal refused")
    if task == "work":
        assert workers.journal.wait_for("cancelled", job=job_id)["lost"] is True
    else:
        workers.journal.wait_for("lost", job=job_id)  # the thread saw ctx.lost and returned

    counts = w.terminate()
    assert counts == {
        "claimed": 1,
        "succeeded": 0,
        "failed": 0,
        "dead": 0,
        "lost": 1,
        "stale": 0,
        "released": 0,
    }
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["errors"]) == ("cancelled", 1, [])


def test_job_is_given_up_when_renewal_cannot_get_through(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """Renewal blocked (the job's row locked by another session): once the
    lease could have expired the worker gives the job up on its own clock and
    cancels the handler; the job is claimed again later and completed."""
    url = make_database(deploy=True)
    gate = tmp_path / "second-attempt-may-pass"
    job_id = enqueue(url, "work", {"gate": str(gate)})
    w = workers.start(url, "w")
    first = workers.journal.wait_for("start", job=job_id)

    with psycopg.connect(url) as locker:
        locker.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR UPDATE", [job_id])
        w.wait_for_log(f"lost job {job_id} (attempt 1): no successful renewal")
        assert workers.journal.wait_for("cancelled", job=job_id, attempt=1)["lost"] is True
        assert f"job {job_id}: renewal could not be made now" in w.log()
        wait_for_expiry(url, job_id)
        gate.touch()
        locker.rollback()

    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    sent = effects(workers.journal, job_id)
    assert [e["attempt"] for e in sent] == [2]
    assert sent[0]["token"] != first["token"]
    counts = w.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"], counts["stale"]) == (2, 1, 1, 0)


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


def test_commit_broken_off_is_resolved_with_lease_state(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """The connection of a transactional handler breaks during COMMIT: the
    worker asks lease_state on another connection, learns the COMMIT did not
    happen, fails the attempt without calling complete again, and the next
    attempt commits its writes once.

    A deferred trigger makes the first COMMIT slow, so that its backend can
    be terminated in the middle of it. The worker's lease is long, so that
    its watchdog stays out of the way while the COMMIT hangs.
    """
    url = make_database(deploy=True)
    create_ledger(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE public.commits")
        conn.execute(
            "CREATE FUNCTION public.slow_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN"
            "   IF nextval('public.commits') = 1 THEN PERFORM pg_sleep(600); END IF;"
            "   RETURN NULL;"
            " END $$"
        )
        conn.execute(
            "CREATE CONSTRAINT TRIGGER slow_first_commit AFTER INSERT ON public.ledger"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.slow_first_commit()"
        )
    w = workers.start(url, "w", lease=60, renew_every=20)
    job_id = enqueue(url, "ledger")

    def committing() -> int | None:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE application_name = 'taskboard w' AND state = 'active' AND query = 'COMMIT'"
            ).fetchone()
        return None if row is None else int(row[0])

    pid = wait_until(committing, "the handler's COMMIT to hang")
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT pg_terminate_backend(%s)", [pid]) is True
    w.wait_for_log(f"job {job_id}: connection lost during COMMIT")
    w.wait_for_log(f"job {job_id}: its COMMIT did not happen (lease_state held)")

    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    [error] = done["errors"]
    assert error["attempt"] == 1 and "during COMMIT, which did not happen" in error["error"], error
    assert [str(r["token"]) for r in ledger_rows(url, job_id)] == [str(done["lease_token"])]
    counts = w.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["failed"], counts["stale"]) == (
        2,
        1,
        1,
        0,
    )


# -- taskboard worker --processes N -----------------------------------------------------
#
# The console script itself, on tests/apps/cli_app.py: a parent that starts N
# `python -m taskboard worker` children and stops them together.

TASKBOARD = Path(sys.executable).parent / "taskboard"  # the venv's console script
TESTS_DIR = Path(__file__).resolve().parent  # the worker imports apps.cli_app from here
CLI_APP = "apps.cli_app:app"
CHILD_STARTED = re.compile(r"worker process (\d+) of (\d+) started: pid (\d+)")


@dataclass
class Supervisor:
    """One `taskboard worker --processes N` process, its log, and its children's pids."""

    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def children(self, count: int) -> dict[int, int]:
        """{index: pid} once the parent has logged `count` children started."""

        def started() -> dict[int, int] | None:
            assert self.proc.poll() is None, f"the parent exited early:\n{self.log()}"
            found = {int(m[1]): int(m[3]) for m in CHILD_STARTED.finditer(self.log())}
            return found if len(found) == count else None

        return wait_until(started, f"{count} worker processes to start")

    def wait_exit(self, timeout: float = EXIT_SECONDS) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the parent did not exit within {timeout:g}s:\n{self.log()}"
            ) from None


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.fixture
def supervisors(tmp_path: Path) -> Iterator[Callable[..., Supervisor]]:
    """Starts `taskboard worker apps.cli_app:app ARGS...` on a database; kills what is left."""
    started: list[Supervisor] = []

    def start(url: str, *args: str, settings: dict[str, str] | None = None) -> Supervisor:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(TASKBOARD_DATABASE_URL=url, PYTHONUNBUFFERED="1", **(settings or {}))
        log_path = tmp_path / f"supervisor-{len(started)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [str(TASKBOARD), "worker", CLI_APP, *args],
                cwd=TESTS_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        started.append(Supervisor(proc, log_path))
        return started[-1]

    try:
        yield start
    finally:
        for supervisor in started:
            if supervisor.proc.poll() is None:
                supervisor.proc.send_signal(signal.SIGTERM)
                try:
                    supervisor.proc.wait(EXIT_SECONDS)
                except subprocess.TimeoutExpired:
                    supervisor.proc.kill()
                    supervisor.proc.wait()
            for pid in {int(m[3]) for m in CHILD_STARTED.finditer(supervisor.log())}:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
            print(
                f"----- log of taskboard worker --processes (exit {supervisor.proc.returncode}) -----"
            )
            print(supervisor.log())


def cli_jobs(url: str, count: int, sleep: float) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT taskboard.enqueue(task => 'cli-pid', queue => 'cli',"
                "                         payload => jsonb_build_object('sleep', %s::float8))"
                "  FROM generate_series(1, %s)",
                [sleep, count],
            )
        ]


def results(url: str, job_ids: list[int]) -> dict[int, tuple[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT id, state, result FROM taskboard.jobs WHERE id = ANY(%s)", [job_ids]
            )
        }


def test_processes_run_sync_jobs_in_several_processes_and_stop_together_on_sigterm(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "3", "--concurrency", "1", "--pool-size", "3")
    children = parent.children(3)
    assert len(set(children.values())) == 3 and parent.proc.pid not in children.values()
    job_ids = cli_jobs(url, 12, sleep=0.2)

    def all_succeeded() -> dict[int, tuple[str, Any]] | None:
        found = results(url, job_ids)
        return found if all(state == "succeeded" for state, _ in found.values()) else None

    done = wait_until(all_succeeded, "12 jobs to succeed")
    pids = {result["pid"] for _, result in done.values()}
    assert pids <= set(children.values()), (pids, children)
    assert len(pids) >= 2, pids

    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 0, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert "Traceback" not in log
    for index, pid in children.items():
        assert f"worker process {index} (pid {pid}) stopped (exit status 0)" in log, log
    # Every child is a full worker: it logs its own counters on the way out.
    assert log.count(" stopped: claimed=") == 3, log


def test_a_child_killed_stops_the_others_and_the_parent_exits_non_zero(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "3", "--pool-size", "3", "--worker-name", "pw")
    children = parent.children(3)
    wait_until(
        lambda: all(f"worker pw-{i} started" in parent.log() for i in children),
        "every child to start its worker",
    )
    os.kill(children[2], signal.SIGKILL)
    assert parent.wait_exit() != 0, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert f"worker process 2 (pid {children[2]}) stopped on its own (killed by SIGKILL)" in log, (
        log
    )


@pytest.mark.parametrize("value", ["0", "x", "257", " 2", "1_0", "２"])
def test_processes_out_of_range_is_one_line_naming_the_option_and_exit_2(
    make_database: MakeDatabase, value: str
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", value],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskboard: error: "), done.stderr
    assert "--processes" in lines[0], lines[0]
    assert "worker process" not in done.stdout + done.stderr


def jobs_in(url: str, job_ids: list[int], state: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE id = ANY(%s) AND state = %s",
            [job_ids, state],
        ).fetchone()
    return found == (len(job_ids),)


def test_sigterm_to_the_parent_and_every_child_at_once_drains_each_child_once(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """What systemd's default KillMode=control-group (or pkill -f) does: the children
    ignore the signal sent to them and drain once, on the parent's request."""
    url = make_database(deploy=True)
    parent = supervisors(
        url,
        *("--processes", "2", "--concurrency", "1", "--pool-size", "3", "--worker-name", "grp"),
        settings={"TASKBOARD_SHUTDOWN_GRACE": "1"},
    )
    children = parent.children(2)
    wait_until(
        lambda: all(f"worker grp-{i} started" in parent.log() for i in children),
        "every child to start its worker",
    )
    job_ids = cli_jobs(url, 2, sleep=30)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")

    for pid in (parent.proc.pid, *children.values()):
        os.kill(pid, signal.SIGTERM)

    assert parent.wait_exit() == 0, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert "at once" not in log, log
    assert log.count("from the parent process: shutting down") == 2, log
    # Each drained: past its grace it released the job its handler still ran.
    assert jobs_in(url, job_ids, "queued"), results(url, job_ids)


def test_sigterm_while_the_children_start_reaches_every_child(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """A signal that arrives while the parent is starting a child is passed on to that
    child too: the parent asks from its loop, not from its signal handler."""
    url = make_database(deploy=True)
    parent = supervisors(
        url,
        *("--processes", "4", "--pool-size", "3"),
        settings={"TASKBOARD_SHUTDOWN_GRACE": "2"},
    )
    wait_until(lambda: "worker process 1 of 4 started" in parent.log(), "the first child")
    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 0, parent.log()
    log = parent.log()
    assert "did not stop in time" not in log, log
    started = [int(m[3]) for m in CHILD_STARTED.finditer(log)]
    assert started and not [pid for pid in started if alive(pid)], log


def test_an_empty_worker_name_is_refused_with_processes_as_without(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", "2", "--worker-name", ""],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert "WORKER_NAME" in done.stderr and "worker process" not in done.stderr


def test_bad_settings_fail_in_the_parent_before_any_child_starts(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", "2", "--pool-size", "2"],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert "TASKBOARD_POOL_SIZE" in done.stderr and "worker process" not in done.stderr


# -- a server restart, last -------------------------------------------------------
#
# The restart happens on a private throwaway server that the test starts with
# devdb in a temporary directory (TASKBOARD_ROOT), of the same major version
# as the server the other tests use: restarting that one would break
# whatever else is using it at the same time.

JOBS = 300  # half plain, half transactional, interleaved
RESTART_AFTER = 60  # jobs succeeded before the server goes down
DEVDB_TIMEOUT_SECONDS = 180


@dataclass
class PrivateServer:
    """A devdb server of our own under `root`/.taskboard, stopped and started at will."""

    root: Path
    version: str
    url: str = ""

    def devdb(self, command: str) -> str:
        env = {k: v for k, v in os.environ.items() if k != devdb.DATABASE_URL_ENV}
        env[devdb.ROOT_ENV] = str(self.root)
        result = subprocess.run(
            [sys.executable, "-m", "taskboard_dev.devdb", command, "--pg", self.version],
            env=env,
            capture_output=True,
            text=True,
            timeout=DEVDB_TIMEOUT_SECONDS,
            check=False,
        )
        assert result.returncode == 0, f"devdb {command} failed:\n{result.stdout}{result.stderr}"
        return result.stdout.strip()

    def start(self) -> None:
        self.url = self.devdb("start")

    def stop(self) -> None:
        self.devdb("stop")


@pytest.fixture
def private_server(server_url: str) -> Iterator[PrivateServer]:
    with psycopg.connect(server_url, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()
    assert row is not None
    version = str(row[0]) if str(row[0]) in devdb.VERSIONS else devdb.DEFAULT_VERSION
    root = Path(tempfile.mkdtemp(prefix="taskboard-restart-"))
    server = PrivateServer(root, version)
    try:
        server.start()
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def succeeded(url: str) -> int:
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM taskboard.jobs WHERE state = 'succeeded'"
            ).fetchone()
    except psycopg.OperationalError:
        return 0  # the server is coming back
    assert row is not None
    return int(row[0])


def test_worker_started_while_the_database_is_down_waits_for_it(
    private_server: PrivateServer,
    sqitch: Callable[..., subprocess.CompletedProcess[str]],
    workers: Workers,
) -> None:
    """One log line per attempt, capped backoff, and work as soon as the server is up."""
    with psycopg.connect(private_server.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE taskboard_late")
    url = devdb.database_url(private_server.url, "taskboard_late")
    deployed = sqitch(url, "deploy", "--verify")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    private_server.stop()
    try:
        w = workers.start(url, "late")
        wait_until(
            lambda: w.log().count("database not reachable") >= 3, "three attempts to connect"
        )
        assert w.proc.poll() is None, w.log()
        assert "Traceback" not in w.log()
    finally:
        private_server.start()
    w.wait_for_log("worker late started")
    job_id = enqueue(url, "work")
    wait_for_job(url, job_id, "succeeded", lambda r: r["state"] == "succeeded")
    w.terminate()


def test_worker_rides_out_a_server_restart(
    private_server: PrivateServer,
    sqitch: Callable[..., subprocess.CompletedProcess[str]],
    workers: Workers,
) -> None:
    """Every job ends succeeded, none is run to success twice by one claim,
    transactional writes exist once per job with its final token, and every
    claim the worker made is accounted for exactly once."""
    with psycopg.connect(private_server.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE taskboard_restart")
    url = devdb.database_url(private_server.url, "taskboard_restart")
    deployed = sqitch(url, "deploy", "--verify")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    create_ledger(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT taskboard.enqueue(task => CASE WHEN i %% 2 = 0 THEN 'work' ELSE 'ledger' END,"
            "                         payload => '{\"sleep\": 0.02}')"
            "  FROM generate_series(1, %s) AS i",
            [JOBS],
        )

    w = workers.start(url, "w", pool_size=6)
    wait_until(lambda: succeeded(url) >= RESTART_AFTER, f"{RESTART_AFTER} jobs to succeed")
    private_server.stop()
    w.wait_for_log("control connection failed")
    private_server.start()
    wait_until(lambda: succeeded(url) == JOBS, "every job to succeed", timeout=240)
    counts = w.terminate()

    log = w.log()
    assert "control connection back: claiming at once" in log
    assert "renewal failed" in log
    with psycopg.connect(url, autocommit=True) as conn:
        jobs = {
            r[0]: (r[1], str(r[2]), r[3])
            for r in conn.execute("SELECT id, task, lease_token, result FROM taskboard.jobs")
        }
        ledger = Counter(
            (r[0], str(r[1])) for r in conn.execute("SELECT job_id, token FROM public.ledger")
        )
    assert len(jobs) == JOBS

    journal = workers.journal
    starts = Counter(e["token"] for e in journal.events("start"))
    sent = Counter(e["token"] for e in journal.events("effect"))
    assert max(starts.values()) == 1, "a claim's handler ran twice"
    assert max(sent.values()) == 1
    for job_id, (task, token, result) in jobs.items():
        assert result["token"] == token, f"job {job_id} was completed by a token not its last"
        assert sent[token] == 1
        if task == "ledger":
            rows = {k: n for k, n in ledger.items() if k[0] == job_id}
            assert rows == {(job_id, token): 1}, f"ledger rows of job {job_id}: {rows}"
    assert sum(ledger.values()) == JOBS // 2

    settled = sum(counts[k] for k in ("succeeded", "failed", "dead", "lost", "stale", "released"))
    assert counts["claimed"] == settled, counts
    assert counts["succeeded"] <= JOBS <= counts["succeeded"] + counts["lost"], counts
    assert counts["dead"] == 0
    # A job run more than once was given up or failed by an earlier claim.
    assert sum(sent.values()) - JOBS <= counts["claimed"] - counts["succeeded"]
