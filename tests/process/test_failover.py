"""A worker and a producer through a failover: a primary and its synchronous standby, two
real PostgreSQL 18 servers in streaming replication on loopback TCP, and a multi-host URL
with target_session_attrs=read-write.

The primary either dies (kill -9 of every server process) or hangs (SIGSTOP of every
server process: what a stuck host or a network partition looks like to a client, the
kernel still answering TCP), and the standby is promoted. Then:

- no job the producer was told was enqueued is lost, nor answered for by another job;
- no stale completion is accepted (each result carries the token of the job's last claim);
- every job that started twice was claimed again only after its lease expired;
- the worker and the producer are back, without a restart, within 30 s of the promotion.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from taskboard_dev.harness import WorkerProcess, read_records
from taskboard_dev.server import Server
from tests.support import TESTS_DIR
from tests.support.cli import TASKBOARD, run
from tests.support.processes import wait_until

DATABASE = "taskboard_failover"
PRODUCER = TESTS_DIR / "apps" / "failover_producer.py"
# Short leases keep each scenario short: the driver's detection bounds follow renew_every.
LEASE_SECONDS = 6
RENEW_EVERY_SECONDS = 2
BACK_WITHIN_SECONDS = 30.0  # of the promotion: the worker and the producer
JOBS_BEFORE = 30  # acknowledged before the primary goes
JOBS_AFTER = 20  # acknowledged after the promotion, before the producer stops
SETTLE_SECONDS = 60.0  # for every acknowledged job to succeed once the producer stopped
SYNC_SECONDS = 30.0  # for the standby to become synchronous
# A job that runs across the hang: longer than the hang takes to outlast its lease. The
# worker may renew once more before the hang begins (it begins as soon as the test sees
# the job start, late on a busy machine): lease, a renewal and slack, so that the
# watchdog gives the job up while its handler still runs.
LONG_JOB_SECONDS = LEASE_SECONDS + 2 * RENEW_EVERY_SECONDS + 4
# A stopped worker's bound: the grace, then ten seconds to settle what it holds.
EXIT_WITHIN_SECONDS = 30.0


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Pair:
    """A primary and its synchronous standby, and the URLs that name them."""

    primary: Server
    standby: Server

    def url(self, *servers: Server) -> str:
        """A multi-host URL of `DATABASE` on `servers` (both, primary first, by default)."""
        hosts = ",".join(s.tcp_address() for s in servers or (self.primary, self.standby))
        return f"postgresql://postgres@{hosts}/{DATABASE}?target_session_attrs=read-write"

    def hang(self) -> list[int]:
        """SIGSTOP every process of the primary; their pids."""
        pids = self.primary.processes()
        assert pids, "the primary is not running"
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return pids

    def kill_primary(self) -> None:
        """kill -9 every process of the primary (stopped ones too)."""
        for pid in self.primary.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not self.primary.processes(), "the primary's processes to be gone")


@pytest.fixture
def pair() -> Iterator[Pair]:
    primary = Server(tcp_port=free_port(), prefix="taskboard-primary-")
    standby = Server(tcp_port=free_port(), prefix="taskboard-standby-")
    try:
        primary.start()
        with psycopg.connect(primary.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        standby.base_backup(primary)
        standby.start()
        with psycopg.connect(primary.url(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            conn.execute("SELECT pg_reload_conf()")
            wait_until(
                lambda: (
                    conn.execute(
                        "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'"
                    ).fetchone()
                    == (1,)
                ),
                "the standby to be synchronous",
                SYNC_SECONDS,
            )
        yield Pair(primary, standby)
    finally:
        for server in (primary, standby):
            for pid in server.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            shutil.rmtree(server.datadir, ignore_errors=True)


@dataclass
class Run:
    """The worker and the producer of one scenario, and what they wrote."""

    directory: Path
    worker: WorkerProcess
    producer: WorkerProcess
    stop_file: Path

    @property
    def journal(self) -> list[dict[str, Any]]:
        return list(read_records(self.directory / "journal.jsonl"))

    @property
    def acks(self) -> list[dict[str, Any]]:
        return list(read_records(self.directory / "acks.jsonl"))

    def close(self) -> None:
        for process in (self.producer, self.worker):
            process.kill()
            print(f"----- log of {process.name} (exit {process.proc.returncode}) -----")
            print(process.log())


@pytest.fixture
def run_in(tmp_path: Path) -> Iterator[Callable[[str], Run]]:
    """`run_in(url)`: start the worker (`taskboard worker`) and the producer on `url`."""
    runs: list[Run] = []

    def start(url: str) -> Run:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "TASKBOARD_DATABASE_URL": url,
                "TASKBOARD_LEASE": str(LEASE_SECONDS),
                "TASKBOARD_RENEW_EVERY": str(RENEW_EVERY_SECONDS),
                "TASKBOARD_POOL_SIZE": "10",
                "TASKBOARD_POLL_INTERVAL": "0.2",
                "TASKBOARD_SHUTDOWN_GRACE": "5",
                "TASKBOARD_WORKER_NAME": "survivor",
                "WORKER_APP_JOURNAL": str(tmp_path / "journal.jsonl"),
                "PRODUCER_ACKS": str(tmp_path / "acks.jsonl"),
                "PRODUCER_STOP": str(tmp_path / "stop"),
            }
        )
        worker = WorkerProcess.start(
            "worker",
            [str(TASKBOARD), "worker", "apps.worker_app:app"],
            log_path=tmp_path / "worker.log",
            env=env,
            cwd=TESTS_DIR,
        )
        producer = WorkerProcess.start(
            "producer",
            [sys.executable, str(PRODUCER)],
            log_path=tmp_path / "producer.log",
            env=env,
            cwd=TESTS_DIR,
        )
        done = Run(tmp_path, worker, producer, tmp_path / "stop")
        runs.append(done)
        return done

    try:
        yield start
    finally:
        for done in runs:
            done.close()


def jobs(url: str) -> dict[int, dict[str, Any]]:
    """Every job of the database at `url` by id, with its history of reclaims."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        rows = conn.execute(
            "SELECT id, state, attempt, lease_token, payload, result FROM taskboard.jobs"
        ).fetchall()
        reclaims = conn.execute(
            "SELECT job_id, attempt, at, lease_expires_at FROM taskboard.job_events"
            " WHERE kind = 'reclaimed'"
        ).fetchall()
    found = {row["id"]: {**row, "reclaims": []} for row in rows}
    for line in reclaims:
        found[line["job_id"]]["reclaims"].append(line)
    return found


def succeeded_after(url: str, ids: list[int]) -> bool:
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
            row = conn.execute(
                "SELECT count(*) FROM taskboard.jobs WHERE id = ANY(%s) AND state = 'succeeded'",
                [ids],
            ).fetchone()
    except psycopg.OperationalError:
        return False
    return row is not None and row[0] > 0


def fail_over(
    pair: Pair,
    run_: Run,
    new_primary: str,
    go: Callable[[], object],
    started_again: Sequence[int] = (),
) -> None:
    """Run the workload through `go` (the primary dies or hangs) and the promotion, then
    check what a failover must keep (see the module docstring); the jobs of
    `started_again` must have started twice."""
    wait_until(lambda: len(run_.acks) >= JOBS_BEFORE, f"{JOBS_BEFORE} acknowledged jobs")
    acked_before = len(run_.acks)
    go()
    pair.standby.promote()
    promoted = time.time()
    started = time.monotonic()

    def back() -> bool:
        run_.worker.check_alive()
        run_.producer.check_alive()
        fresh = [a["id"] for a in run_.acks if a["at"] > promoted]
        return bool(fresh) and succeeded_after(new_primary, fresh)

    wait_until(back, "a job enqueued after the promotion to succeed", BACK_WITHIN_SECONDS)
    back_after = time.monotonic() - started
    assert back_after <= BACK_WITHIN_SECONDS
    wait_until(
        lambda: len(run_.acks) >= acked_before + JOBS_AFTER,
        f"{JOBS_AFTER} more acknowledged jobs",
    )
    run_.stop_file.touch()
    assert run_.producer.wait_exit() == 0, run_.producer.log()
    acks = run_.acks

    def all_settled() -> bool:
        found = jobs(new_primary)
        ids = [a["id"] for a in acks] + list(started_again)
        return all(i in found and found[i]["state"] == "succeeded" for i in ids)

    wait_until(all_settled, "every acknowledged job to succeed", SETTLE_SECONDS)
    assert run_.worker.terminate() is not None  # exits 0: it holds nothing
    found = jobs(new_primary)

    # 0 acknowledged jobs lost, and no id answering for another job.
    for ack in acks:
        job = found.get(ack["id"])
        assert job is not None, f"acknowledged job {ack} was lost"
        assert job["payload"]["n"] == ack["n"], f"id {ack['id']} answers for {job['payload']}"

    # 0 stale completions accepted: each result is that of the job's last claim.
    for job_id, job in found.items():
        if job["state"] == "succeeded":
            assert job["result"]["token"] == str(job["lease_token"]), job_id
            assert job["result"]["attempt"] == job["attempt"], job_id

    # Every second start explained by an expired lease.
    starts: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for event in run_.journal:
        if event["event"] == "start":
            starts[event["job"]].append(event)
    for job_id, begun in starts.items():
        job = found[job_id]
        for start in begun:
            if start["token"] == str(job["lease_token"]):
                continue  # the claim that ran it to the end
            expired = [
                r
                for r in job["reclaims"]
                if r["attempt"] == start["attempt"] and r["lease_expires_at"] <= r["at"]
            ]
            assert expired, f"job {job_id} attempt {start['attempt']} started again unexplained"
    for job_id in started_again:
        assert len(starts[job_id]) >= 2, f"job {job_id} started {len(starts[job_id])} time(s)"
    again = sum(1 for begun in starts.values() if len(begun) > 1)
    print(
        f"back {back_after:.1f}s after the promotion; {len(acks)} jobs acknowledged, "
        f"{again} started more than once"
    )


def deploy(pair: Pair) -> None:
    """`taskboard migrate` through the multi-host URL, on the path without Sqitch (one
    transaction: one synchronous commit instead of one a change)."""
    done = run(pair.url(), "migrate", path=str(Path(sys.executable).parent))
    assert done.returncode == 0, done.stdout + done.stderr


def test_worker_and_producer_survive_a_killed_primary(
    pair: Pair, run_in: Callable[[str], Run]
) -> None:
    deploy(pair)
    run_ = run_in(pair.url())
    fail_over(pair, run_, pair.standby.url(DATABASE), pair.kill_primary)
    assert "Traceback" not in run_.worker.log()


def test_worker_and_producer_survive_a_hung_primary(
    pair: Pair, run_in: Callable[[str], Run]
) -> None:
    """Every process of the primary stopped: nothing answers, yet every TCP packet is
    acknowledged. Deadlines drop the connections and the driver moves to the new primary."""
    deploy(pair)
    run_ = run_in(pair.url())
    with psycopg.connect(pair.primary.url(DATABASE), autocommit=True) as conn:
        row = conn.execute(
            "SELECT taskboard.enqueue('work', %s::jsonb)", [f'{{"sleep": {LONG_JOB_SECONDS}}}']
        ).fetchone()
    assert row is not None
    long_job = int(row[0])

    def hang_past_the_lease() -> None:
        """The long job runs when the primary hangs, and the hang outlasts its lease: the
        worker gives it up, and the new primary hands it out again."""
        wait_until(
            lambda: any(e["event"] == "start" and e["job"] == long_job for e in run_.journal),
            "the long job to start",
        )
        pair.hang()
        time.sleep(LEASE_SECONDS + 1)  # how long the primary stays hung before the promotion

    fail_over(pair, run_, pair.standby.url(DATABASE), hang_past_the_lease, [long_job])
    pair.kill_primary()
    worker_log = run_.worker.log()
    assert "no answer from" in worker_log, worker_log
    assert "Traceback" not in worker_log


def test_migrate_through_a_multi_host_url_finds_the_primary(pair: Pair) -> None:
    """The standby first in the URL: migrate deploys on the primary, with Sqitch as without."""
    url = pair.url(pair.standby, pair.primary)
    without = run(url, "migrate", path=str(Path(sys.executable).parent))
    assert without.returncode == 0, without.stdout + without.stderr
    assert "With Sqitch" not in without.stdout
    with psycopg.connect(pair.standby.url(DATABASE), autocommit=True) as conn:
        row = conn.execute("SELECT taskboard.version()").fetchone()
    assert row is not None and row[0]  # deployed on the primary, replicated to the standby
    assert shutil.which("sqitch") is not None
    with_sqitch = run(url, "migrate")
    assert with_sqitch.returncode == 0, with_sqitch.stdout + with_sqitch.stderr
    assert "With Sqitch" in with_sqitch.stdout


def test_a_url_naming_only_a_standby_says_so_and_keeps_trying(pair: Pair, tmp_path: Path) -> None:
    """A worker whose URL names only a read-only server logs why in one line per attempt,
    naming the host, and keeps running (it never gets as far as the schema)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env.update(
        {
            "TASKBOARD_DATABASE_URL": pair.url(pair.standby),
            "WORKER_APP_JOURNAL": str(tmp_path / "journal.jsonl"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    worker = WorkerProcess.start(
        "standby-only",
        [str(TASKBOARD), "worker", "apps.worker_app:app"],
        log_path=tmp_path / "worker.log",
        env=env,
        cwd=TESTS_DIR,
    )
    try:
        wait_until(
            lambda: worker.log().count("the server is read-only") >= 2,
            "two attempts that name the read-only server",
        )
        worker.check_alive()
        lines = [line for line in worker.log().splitlines() if "read-only" in line]
        assert pair.standby.tcp_address().split(":")[1] in lines[0], lines[0]
    finally:
        worker.kill()
        print(worker.log())


def test_a_worker_stopped_while_its_server_hangs_exits_1_in_bounded_time(
    tmp_path: Path,
) -> None:
    """SIGTERM while every process of the server is stopped and the worker holds a job:
    its release is never answered, and the worker exits 1 saying so, instead of hanging."""
    server = Server(tcp_port=free_port(), prefix="taskboard-hung-")
    try:
        server.start()
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        url = f"postgresql://postgres@{server.tcp_address()}/{DATABASE}"
        done = run(url, "migrate", path=str(Path(sys.executable).parent))
        assert done.returncode == 0, done.stdout + done.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT taskboard.enqueue('work', '{\"sleep\": 30}')")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "TASKBOARD_DATABASE_URL": url,
                "TASKBOARD_LEASE": str(LEASE_SECONDS),
                "TASKBOARD_RENEW_EVERY": str(RENEW_EVERY_SECONDS),
                "TASKBOARD_SHUTDOWN_GRACE": "1",
                "WORKER_APP_JOURNAL": str(tmp_path / "journal.jsonl"),
            }
        )
        worker = WorkerProcess.start(
            "stopped",
            [str(TASKBOARD), "worker", "apps.worker_app:app"],
            log_path=tmp_path / "worker.log",
            env=env,
            cwd=TESTS_DIR,
        )
        try:
            wait_until(
                lambda: (
                    any(e["event"] == "start" for e in read_records(tmp_path / "journal.jsonl"))
                    if (tmp_path / "journal.jsonl").exists()
                    else None
                ),
                "the job to start",
            )
            for pid in server.processes():
                os.kill(pid, signal.SIGSTOP)
            began = time.monotonic()
            worker.send(signal.SIGTERM)
            status = worker.wait_exit(EXIT_WITHIN_SECONDS)
            took = time.monotonic() - began
            log = worker.log()
            assert status == 1, log
            assert "stopped holding 1 job(s) it could not settle" in log, log
            assert "no answer from" in log, log
            assert took < EXIT_WITHIN_SECONDS
        finally:
            worker.kill()
            print(worker.log())
    finally:
        for pid in server.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(server.datadir, ignore_errors=True)
