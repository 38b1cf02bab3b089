"""What every workload measures with: the plan of a run, the bench's server and fresh
databases copied from a template per system, worker command lines, and the samples kept."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from report import Samples
from server import ServerCpu
from systems import SYSTEMS

from taskboard_dev.server import PORT, SUPERUSER, Server, recreate_database

HERE = Path(__file__).resolve().parent
OURS = "taskboard"
ENQUEUE_CHUNK = 1_000  # jobs per batch-API call in W1's enqueue
# How often W5's one poller asks whether the queue is empty: the drains last seconds, and
# every poll takes CPU from the workers on two cores.
EMPTIED_POLL_S = 0.02
# How W1 and W5 reach the server: its Unix socket, and TCP loopback as applications
# mostly connect (each statement then costs the server a TCP round trip's work).
TRANSPORTS = ("unix", "tcp")
# What a run of writes leaves in the statistics: every user table of the database (the
# system's own), and the whole server's WAL.
WRITES = """
SELECT coalesce(sum(t.n_tup_ins), 0), coalesce(sum(t.n_tup_upd), 0),
       coalesce(sum(t.n_tup_hot_upd), 0), coalesce(sum(t.n_tup_del), 0),
       w.wal_records, w.wal_fpi, w.wal_bytes
  FROM pg_stat_user_tables AS t, pg_stat_wal AS w
 GROUP BY w.wal_records, w.wal_fpi, w.wal_bytes
"""
WRITE_NAMES = (
    "inserted",
    "updated",
    "hot_updated",
    "deleted",
    "wal_records",
    "wal_fpi",
    "wal_bytes",
)


@dataclass
class Plan:
    mode: str
    runs: int
    jobs: int
    concurrencies: list[int]
    latency_jobs: int
    floor_configs: list[tuple[int, int]]  # (jobs a claim, clients)
    floor_seconds: int
    w3_sizes: list[int]  # finished jobs in the table at each W3 scale step
    w3_cycles: int  # claim+complete cycles a W3 block
    w3_blocks: int  # blocks at each size
    w3_churn: int  # jobs through the API in W3's churn run (0: no churn run)
    w3_backlog: int  # most jobs queued at once during the churn
    w3_consumers: int  # churn connections looping claim + complete_many
    w3_sample_s: float  # churn: table statistics sampled, and prune run, this often
    io_jobs: int = 5_000  # W6
    cpu_jobs: int = 2_000  # W7
    backlog_jobs: int = 600_000  # W8: queued jobs, each with 5 old errors
    big_jobs: int = 60  # W8: finished jobs with a big payload and result
    big_bytes: int = 4 * 2**20  # W8: the payload and result of each, together
    xmin_baseline_s: float = 120.0  # W13: churn before the xmin is held
    xmin_hold_s: float = 600.0  # W13: how long it is held
    xmin_after_s: float = 180.0  # W13: churn after the release
    w12_million: bool = False  # W12: the 1,000,000-dependent cases too (--w12-million)
    systems: list[str] = field(default_factory=lambda: list(SYSTEMS))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def chunks(n: int, size: int) -> list[range]:
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


def analyze(url: str) -> None:
    """Give the planner the backlog's statistics, as autovacuum would in steady state."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def tcp_url(database: str) -> str:
    """`database` on the bench's server over TCP loopback, as the superuser."""
    return f"postgresql://{SUPERUSER}@127.0.0.1:{PORT}/{database}"


def over(transport: str) -> str:
    """The suffix of a line measured over `transport` (none for the Unix socket)."""
    return "" if transport == "unix" else ", TCP"


def writes(url: str) -> dict[str, int]:
    """The database's row writes and the server's WAL so far, once every other session
    of the database has ended (a session's counts reach the statistics when it ends)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(500):
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
            if row is not None and row[0] == 0:
                break
            time.sleep(0.01)
        got = conn.execute(WRITES).fetchone()
    assert got is not None
    return dict(zip(WRITE_NAMES, (int(v) for v in got), strict=True))


def per_job(before: dict[str, int], after: dict[str, int], n: int) -> dict[str, float]:
    """What was written between two `writes` readings, per job."""
    return {k: (after[k] - before[k]) / n for k in WRITE_NAMES}


def checkpoint(server: Server) -> None:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")


class Bench:
    def __init__(
        self,
        plan: Plan,
        server: Server,
        work: Path,
        *,
        py_spy: Path | None = None,
        analyze: bool = True,
        taskboard_sql: Path | None = None,
    ) -> None:
        self.plan = plan
        self.taskboard_sql = taskboard_sql
        self.analyze = analyze
        self.server = server
        self.work = work
        self.py_spy = py_spy
        self.samples = Samples()
        self.details: list[dict[str, Any]] = []

    def record(self, detail: dict[str, Any]) -> None:
        """Keep one measurement's details, with the machine's 1-minute load average after it."""
        self.details.append({**detail, "load1": round(os.getloadavg()[0], 2)})

    def template(self, system: str) -> str:
        return f"tpl_{system}"

    async def install(self) -> None:
        for name in self.plan.systems:
            log(f"installing {name} into its template database")
            url = recreate_database(self.server.url(), self.template(name))
            await SYSTEMS[name].install(url)
            if name == OURS and self.taskboard_sql is not None:
                import psycopg

                log(
                    f"applying {self.taskboard_sql} to Taskboard's template (a candidate change, measured)"
                )
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(self.taskboard_sql.read_text())

    def fresh(self, system: str, what: str, transport: str = "unix") -> str:
        """A new database `what`_`system` from the system's template, its URL over
        `transport` (TRANSPORTS)."""
        url = recreate_database(
            self.server.url(), f"{what}_{system}", template=self.template(system)
        )
        checkpoint(self.server)
        return tcp_url(f"{what}_{system}") if transport == "tcp" else url

    def worker_argv(
        self,
        system: str,
        url: str,
        concurrency: int,
        mode: str,
        jobs: int,
        out: Path,
        extra: tuple[str, ...] = (),
    ) -> list[str]:
        external = getattr(SYSTEMS[system], "worker_argv", None)
        if external is not None:  # a worker of its own, worker.py's protocol (Node peers)
            return external(url, concurrency, mode, jobs, out, extra)
        argv = [
            sys.executable,
            str(HERE / "worker.py"),
            system,
            url,
            f"--concurrency={concurrency}",
            f"--mode={mode}",
            f"--jobs={jobs}",
            f"--out={out}",
            *extra,
        ]
        if self.py_spy is not None and system == OURS and mode == "drain":
            profile = self.py_spy / f"{system}-{mode}-c{concurrency}-{uuid.uuid4().hex[:6]}.txt"
            py_spy = Path(sys.executable).with_name("py-spy")
            argv = [
                str(py_spy),
                "record",
                "--format",
                "raw",
                "--rate",
                "200",
                "-o",
                str(profile),
                "--",
                *argv,
            ]
        return argv

    async def timed_drain(
        self,
        name: str,
        url: str,
        concurrency: int,
        n: int,
        out: Path,
        extra: tuple[str, ...] = (),
    ) -> tuple[dict[str, Any], float, dict[str, Any]]:
        """Run a drain worker over the `n` queued jobs; its stamps, the seconds from the
        first handler's start to the last job's finish, and the server's CPU over those
        same seconds (`ServerCpu.between`, sampled while the worker runs)."""
        async with ServerCpu(self.server).sampling() as cpu:
            proc = await asyncio.create_subprocess_exec(
                *self.worker_argv(name, url, concurrency, "drain", n, out, extra)
            )
            code = await asyncio.wait_for(proc.wait(), timeout=max(300.0, n / 50))
        if code != 0:
            raise RuntimeError(f"{name} drain worker exited with {code}")
        stamps: dict[str, Any] = json.loads(await asyncio.to_thread(out.read_text))
        server_cpu = cpu.between(stamps["first_start"], stamps["done"], n)
        return stamps, stamps["done"] - stamps["first_start"], server_cpu

    async def emptied(
        self, name: str, url: str, procs: list[asyncio.subprocess.Process], timeout: float
    ) -> float:
        """Wall time at which `name`'s queue had no unfinished job left, polled every
        EMPTIED_POLL_S by this one process; RuntimeError when a worker exits first."""
        import psycopg

        deadline = time.monotonic() + timeout
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as watcher:
            while True:
                row = await (await watcher.execute(SYSTEMS[name].REMAINING)).fetchone()
                if row is not None and row[0] == 0:
                    return time.time()
                if any(p.returncode is not None for p in procs):
                    raise RuntimeError(f"a {name} worker exited before the queue was empty")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}'s queue was not empty in time")
                await asyncio.sleep(EMPTIED_POLL_S)
