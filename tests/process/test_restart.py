"""The Python worker as real processes: a restart of PostgreSQL, on a private server of its
own, and a worker started while the database is down."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from taskboard_dev import devdb
from tests.support.processes import (
    Workers,
    create_ledger,
    enqueue,
    wait_for_job,
    wait_until,
)

# -- a server restart ---------------------------------------------------------------
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
