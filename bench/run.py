"""Benchmark Taskboard against its peers and a raw-SQL floor; print one table.

    bench/.venv/bin/python bench/run.py            # full: make bench
    bench/.venv/bin/python bench/run.py --quick    # a first look: make bench-quick

One throwaway PostgreSQL 18 (bench/server.py: a taskboard_dev.server.Server)
serves the whole run; each measurement gets a fresh database copied from a
per-system template and starts right after a CHECKPOINT. Systems take turns
within each run, in an order that rotates from run to run.

W1 drain: N no-op jobs enqueued up front with the system's batch API
  (chunks of ENQUEUE_CHUNK, timed), ANALYZE (the statistics autovacuum
  would have in steady state; --cold-stats skips it), then one worker process at each
  concurrency until every job is finished in the database. jobs/s = N /
  (all finished - first handler start); worker start-up is not counted.
W2 latency: an idle worker (concurrency LATENCY_CONCURRENCY); jobs enqueued
  one at a time, each committed on its own, at LATENCY_RATE a second.
  Latency = handler start - the producer's clock right after its commit
  returned (one host, one clock). A worker can start a job before the
  producer, descheduled on a busy machine, reads the clock: such latencies
  come out negative and are kept (the JSON counts them, and also gives the
  percentiles from before the enqueue call, commit included).
W4 renewal (Taskboard only): one renew_many of RENEW_LEASES held leases,
  timed as the worker calls it; median of RENEW_REPEATS calls a run.
W7 CPU-bound (Taskboard only): cpu_jobs queued jobs, each burning CPU_WORK_MS
  of CPU in a sync handler (a pure-Python loop, bench/cpuapp.py), drained by
  `taskboard worker --processes P` for each P of CPU_PROCESSES at CPU_CONCURRENCY
  handlers in all; jobs/s from the first handler start to the queue empty.
W3 scale (Taskboard only, once a bench, after the runs): claim+complete
  latency with the table grown to each of w3_sizes finished jobs, then a
  churn run of w3_churn jobs through the API with default autovacuum
  (bench/w3.py says how).
Floor: pgbench, bench/floor/cycle.sql (claim with FOR UPDATE SKIP LOCKED and
  a token, complete by id and token) at 1 and 50 jobs a claim.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import floor
from report import FLOOR, Line, Samples, table, to_json
from server import bench_server, reported_settings
from systems import SYSTEMS, not_run

from taskboard_dev.server import Server, drop_database, recreate_database

OURS = "taskboard"
# Taskboard under other conditions, measured beside it (not peers).
VARIANTS = {
    "taskboard-limited": "a queue limit it never reaches runs at",
    "taskboard-metrics": "the worker with Prometheus metrics on (scraped every 5 s) runs at",
    "taskboard-0.2.0": "the 0.2.0 schema (claim without queue control) runs at",
}
NODE_PEERS = ("pgboss", "graphile", "graphile-batched")  # not Python peers
BATCHED_PEER = "graphile-batched"  # the fastest peer at W1 c=32: its own target line
W3_SETTLE_S = 2.0  # quiet time after growing W3's table, before sampling it
ENQUEUE_CHUNK = 1_000  # jobs per batch-API call in W1's enqueue
LATENCY_RATE = 50.0  # jobs/s in W2
LATENCY_CONCURRENCY = 8
LATENCY_WARMUP_JOBS = 10
RENEW_LEASES = 1_000
RENEW_REPEATS = 10
WORKLOADS = (
    "w1",
    "w2",
    "w4",
    "w5",
    "w6",
    "w7",
    "floor",
    "w3",
)  # --only's choices, all on by default
# W5, fan-out: one queue drained by 1, 4 and 16 worker processes of FANOUT_CONCURRENCY in all.
FANOUT_PROCESSES = (1, 4, 16)
FANOUT_CONCURRENCY = 32
# How often W5's one poller asks whether the queue is empty: the drains last seconds, and
# every poll takes CPU from the workers on two cores.
EMPTIED_POLL_S = 0.02
# W6, I/O-bound: each handler awaits IO_WORK_MS (an API call), IO_CONCURRENCY at once,
# on IO_CONNECTIONS connections in all; the ceiling is IO_CONCURRENCY / IO_WORK_MS jobs/s.
IO_WORK_MS = 50
IO_CONCURRENCY = 200
IO_CONNECTIONS = 10
# The systems whose worker takes W6's options (pg-boss's Node worker does not).
IO_SYSTEMS = ("taskboard", "procrastinate", "pgqueuer", "graphile", "graphile-batched")
# W7, CPU-bound: each sync handler burns CPU_WORK_MS of CPU; the same CPU_CONCURRENCY
# handlers in all, in each number of processes of CPU_PROCESSES (`taskboard worker --processes`).
CPU_WORK_MS = 5
CPU_CONCURRENCY = 4
CPU_PROCESSES = (1, 2)
CPU_TASK = "w7-burn"  # bench/cpuapp.py's task
READY_TIMEOUT_S = 60.0


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
    systems: list[str] = field(default_factory=lambda: list(SYSTEMS))


FULL = Plan(
    mode="full",
    runs=3,
    jobs=20_000,
    concurrencies=[8, 32],
    latency_jobs=600,
    floor_configs=[(1, 1), (1, 4), (1, 8), (50, 1), (50, 4), (50, 8)],
    floor_seconds=5,
    w3_sizes=[10_000, 1_000_000, 10_000_000],
    w3_cycles=300,
    w3_blocks=3,
    w3_churn=500_000,
    w3_backlog=50_000,
    w3_consumers=4,
    w3_sample_s=5.0,
)
QUICK = Plan(
    mode="quick",
    runs=1,
    jobs=2_000,
    concurrencies=[8, 32],
    latency_jobs=200,
    floor_configs=[(1, 1), (1, 8), (50, 8)],
    floor_seconds=5,
    w3_sizes=[10_000, 100_000],
    w3_cycles=300,
    w3_blocks=3,
    w3_churn=20_000,
    w3_backlog=5_000,
    w3_consumers=4,
    w3_sample_s=1.0,
    io_jobs=1_000,
    cpu_jobs=400,
)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def chunks(n: int, size: int) -> list[range]:
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


def analyze(url: str) -> None:
    """Give the planner the backlog's statistics, as autovacuum would in steady state."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def checkpoint(server: Server) -> None:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")


async def table_updates(conn: Any) -> tuple[int, int]:
    """(row updates, HOT updates) of taskboard.jobs so far, this session's included."""
    await conn.execute("SELECT pg_stat_force_next_flush()")
    await conn.execute("SELECT 1")  # the flush happens when that transaction ends
    cur = await conn.execute(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'taskboard.jobs'::regclass"
    )
    row = await cur.fetchone()
    return int(row[0]), int(row[1])


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

    def fresh(self, system: str, what: str) -> str:
        url = recreate_database(
            self.server.url(), f"{what}_{system}", template=self.template(system)
        )
        checkpoint(self.server)
        return url

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
    ) -> tuple[dict[str, Any], float]:
        """Run a drain worker over the `n` queued jobs; its stamps, and the seconds from
        the first handler's start to the last job's finish."""
        proc = await asyncio.create_subprocess_exec(
            *self.worker_argv(name, url, concurrency, "drain", n, out, extra)
        )
        code = await asyncio.wait_for(proc.wait(), timeout=max(300.0, n / 50))
        if code != 0:
            raise RuntimeError(f"{name} drain worker exited with {code}")
        stamps: dict[str, Any] = json.loads(await asyncio.to_thread(out.read_text))
        return stamps, stamps["done"] - stamps["first_start"]

    # -- W1 ----------------------------------------------------------------------

    async def drain(self, name: str, concurrency: int, run: int) -> None:
        system = SYSTEMS[name]
        n = self.plan.jobs
        url = self.fresh(name, "w1")
        enqueue_s = await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
        if self.analyze:
            analyze(url)
        checkpoint(self.server)
        out = self.work / f"drain-{name}-{concurrency}-{run}.json"
        stamps, drain_s = await self.timed_drain(name, url, concurrency, n, out)
        rate = n / drain_s
        self.samples.add(
            Line("W1", f"enqueue {n:,} (batches of {ENQUEUE_CHUNK:,})", "jobs/s", True),
            name,
            n / enqueue_s,
        )
        self.samples.add(Line("W1", f"drain c={concurrency}", "jobs/s", True), name, rate)
        self.record(
            {
                "workload": "W1",
                "system": name,
                "concurrency": concurrency,
                "run": run,
                "jobs": n,
                "enqueue_s": enqueue_s,
                "drain_s": drain_s,
                "startup_s": stamps["first_start"] - stamps["process_start"],
                "settle_s": stamps["done"] - stamps["last_start"],
            }
        )
        log(f"W1 {name} c={concurrency}: enqueue {n / enqueue_s:,.0f}/s, drain {rate:,.0f} jobs/s")

    # -- W5 ----------------------------------------------------------------------

    async def fanout(self, processes: int, run: int) -> None:
        """W5: the W1 backlog drained by `processes` Taskboard workers sharing
        FANOUT_CONCURRENCY handler slots: claim conflicts and wake-ups as workers multiply."""
        name = OURS
        system = SYSTEMS[name]
        n = self.plan.jobs
        url = self.fresh(name, "w5")
        await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
        if self.analyze:
            analyze(url)
        checkpoint(self.server)
        each = FANOUT_CONCURRENCY // processes
        outs = [self.work / f"share-{processes}-{i}-{run}.json" for i in range(processes)]
        procs = [
            await asyncio.create_subprocess_exec(
                *self.worker_argv(name, url, each, "share", n, out)
            )
            for out in outs
        ]
        done = await self.emptied(name, url, procs, timeout=max(300.0, n / 50))
        for proc in procs:
            proc.terminate()
        codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 60)
        if any(codes):
            raise RuntimeError(f"W5 {processes} workers exited with {codes}")
        stamps = [json.loads(await asyncio.to_thread(out.read_text)) for out in outs]
        ran = [s for s in stamps if s["handlers"]]
        drain_s = done - min(s["first_start"] for s in ran)
        rate = n / drain_s
        config = f"{n:,} jobs, {processes} worker process(es) of c={each}"
        self.samples.add(Line("W5", config, "jobs/s", True), name, rate)
        self.record(
            {
                "workload": "W5",
                "processes": processes,
                "run": run,
                "jobs": n,
                "drain_s": drain_s,
                "handlers": [s["handlers"] for s in stamps],
            }
        )
        log(f"W5 {processes} x c={each}: {rate:,.0f} jobs/s")

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

    # -- W6 ----------------------------------------------------------------------

    async def io_bound(self, name: str, run: int) -> None:
        """W6: io_jobs queued jobs, each handler awaiting IO_WORK_MS, IO_CONCURRENCY at once
        on IO_CONNECTIONS connections."""
        system = SYSTEMS[name]
        n = self.plan.io_jobs
        url = self.fresh(name, "w6")
        await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
        if self.analyze:
            analyze(url)
        checkpoint(self.server)
        out = self.work / f"io-{name}-{run}.json"
        extra = (f"--work-ms={IO_WORK_MS}", f"--connections={IO_CONNECTIONS}")
        _, drain_s = await self.timed_drain(name, url, IO_CONCURRENCY, n, out, extra)
        rate = n / drain_s
        config = f"{n:,} jobs awaiting {IO_WORK_MS} ms, c={IO_CONCURRENCY} on {IO_CONNECTIONS} connections"
        self.samples.add(Line("W6", config, "jobs/s", True), name, rate)
        self.record({"workload": "W6", "system": name, "run": run, "jobs": n, "drain_s": drain_s})
        ceiling = IO_CONCURRENCY * 1000 / IO_WORK_MS
        log(f"W6 {name}: {rate:,.0f} jobs/s (ceiling {ceiling:,.0f})")

    # -- W7 ----------------------------------------------------------------------

    async def cpu_bound(self, processes: int, run: int) -> None:
        """W7: cpu_jobs queued jobs, each burning CPU_WORK_MS of CPU in a sync handler,
        drained by `taskboard worker --processes` with CPU_CONCURRENCY handlers in all."""
        import psycopg

        from taskboard import sql

        name = OURS
        n = self.plan.cpu_jobs
        url = self.fresh(name, "w7")
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            for seqs in chunks(n, ENQUEUE_CHUNK):
                params = sql.enqueue_many_params(
                    CPU_TASK, [{"ms": CPU_WORK_MS} for _ in seqs], "default", None, 0, 5, None
                )
                await sql.aenqueue_many(conn, params)
        if self.analyze:
            analyze(url)
        checkpoint(self.server)
        each = CPU_CONCURRENCY // processes
        stamps = self.work / f"cpu-{processes}-{run}"
        stamps.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(TASKBOARD_DATABASE_URL=url, BENCH_W7_STAMPS=str(stamps))
        proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("taskboard")),
            "worker",
            "cpuapp:app",
            f"--processes={processes}",
            f"--concurrency={each}",
            f"--pool-size={each + 2}",
            "--log-level=WARNING",
            cwd=HERE,
            env=env,
        )
        done = await self.emptied(name, url, [proc], timeout=max(300.0, n / 20))
        proc.terminate()
        code = await asyncio.wait_for(proc.wait(), 60)
        if code != 0:
            raise RuntimeError(f"W7 taskboard worker --processes {processes} exited with {code}")
        starts = [float(path.read_text()) for path in stamps.iterdir()]
        drain_s = done - min(starts)
        rate = n / drain_s
        config = f"{n:,} jobs of {CPU_WORK_MS} ms CPU (sync), --processes {processes} of c={each}"
        self.samples.add(Line("W7", config, "jobs/s", True), name, rate)
        self.record(
            {
                "workload": "W7",
                "processes": processes,
                "concurrency": each,
                "run": run,
                "jobs": n,
                "drain_s": drain_s,
                "processes_that_ran": len(starts),
            }
        )
        log(f"W7 --processes {processes} x c={each}: {rate:,.0f} jobs/s")

    # -- W2 ----------------------------------------------------------------------

    async def latency(self, name: str, run: int) -> None:
        system = SYSTEMS[name]
        m = self.plan.latency_jobs
        url = self.fresh(name, "w2")
        out = self.work / f"latency-{name}-{run}.json"
        proc = await asyncio.create_subprocess_exec(
            *self.worker_argv(name, url, LATENCY_CONCURRENCY, "latency", m, out),
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        sent: dict[int, float] = {}
        committed: dict[int, float] = {}
        try:
            async with system.producer(url) as enqueue:
                ready = asyncio.create_task(proc.stdout.readline())
                deadline = time.monotonic() + READY_TIMEOUT_S
                warm = -1
                while not ready.done():
                    if time.monotonic() > deadline or proc.returncode is not None:
                        raise RuntimeError(f"{name} latency worker never became ready")
                    await enqueue(warm)
                    warm -= 1
                    await asyncio.wait([ready], timeout=0.2)
                if ready.result().strip() != b"READY":
                    raise RuntimeError(f"{name} latency worker said {ready.result()!r}")
                for _ in range(LATENCY_WARMUP_JOBS):
                    await enqueue(warm)
                    warm -= 1
                    await asyncio.sleep(1 / LATENCY_RATE)
                begin = time.monotonic()
                for seq in range(m):
                    delay = begin + seq / LATENCY_RATE - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    sent[seq] = time.time()
                    stamps = await enqueue(seq)
                    committed[seq] = time.time()
                    if stamps is not None:  # taken by the producer's own process
                        sent[seq], committed[seq] = stamps
            code = await asyncio.wait_for(proc.wait(), timeout=60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if code != 0:
            raise RuntimeError(f"{name} latency worker exited with {code}")
        starts = {int(k): v for k, v in json.loads(out.read_text())["starts"].items()}
        ms = sorted((starts[s] - committed[s]) * 1000 for s in range(m))
        q = statistics.quantiles(ms, n=100, method="inclusive")
        for label, value in (("p50", q[49]), ("p95", q[94]), ("p99", q[98])):
            self.samples.add(Line("W2", f"latency {label}", "ms", False), name, value)
        # From before the enqueue call instead: commit included, but immune to the
        # producer being scheduled late after its commit (the negative latencies).
        call = statistics.quantiles(
            sorted((starts[s] - sent[s]) * 1000 for s in range(m)), n=100, method="inclusive"
        )
        enqueue_ms = statistics.median((committed[s] - sent[s]) * 1000 for s in range(m))
        self.samples.add(
            Line("W2", "enqueue one job, call to commit, p50", "ms", False), name, enqueue_ms
        )
        self.record(
            {
                "workload": "W2",
                "system": name,
                "run": run,
                "jobs": m,
                "min_ms": ms[0],
                "max_ms": ms[-1],
                "p50_ms": q[49],
                "p95_ms": q[94],
                "p99_ms": q[98],
                "negative": sum(1 for v in ms if v < 0),
                "enqueue_p50_ms": enqueue_ms,
                "from_call_p50_ms": call[49],
                "from_call_p95_ms": call[94],
                "from_call_p99_ms": call[98],
                # The slowest jobs: [seq, latency ms, seconds after the first measured commit].
                "slowest": sorted(
                    (
                        [s, (starts[s] - committed[s]) * 1000, committed[s] - committed[0]]
                        for s in range(m)
                    ),
                    key=lambda x: -x[1],
                )[:10],
            }
        )
        log(
            f"W2 {name}: p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms, p99 {q[98]:.2f} ms; enqueue {enqueue_ms:.2f} ms"
        )

    # -- W4 ----------------------------------------------------------------------

    async def renewal(self, run: int) -> None:
        import psycopg

        from taskboard import sql

        url = self.fresh(OURS, "w4")
        await SYSTEMS[OURS].enqueue_batches(url, [range(RENEW_LEASES)])
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            held = await sql.claim(conn, "default", "bench-renewer", RENEW_LEASES, 60.0)
            if len(held) != RENEW_LEASES:
                raise RuntimeError(f"claimed {len(held)} of {RENEW_LEASES} jobs")
            ids = [h.job_id for h in held]
            tokens = [h.token for h in held]
            await sql.renew_many(conn, ids, tokens, 60.0)  # warm-up: plan and caches
            before = await table_updates(conn)
            times = []
            for _ in range(RENEW_REPEATS):
                started = time.perf_counter()
                answers = await sql.renew_many(conn, ids, tokens, 60.0)
                times.append((time.perf_counter() - started) * 1000)
                if sum(1 for v in answers if v is not None) != RENEW_LEASES:
                    raise RuntimeError("renew_many refused a lease it should have renewed")
            after = await table_updates(conn)
        updates, hot = after[0] - before[0], after[1] - before[1]
        value = statistics.median(times)
        self.samples.add(
            Line("W4", f"renew_many {RENEW_LEASES:,} leases", "ms", False), OURS, value
        )
        self.record(
            {
                "workload": "W4",
                "system": OURS,
                "run": run,
                "times_ms": times,
                "updates": updates,
                "hot_updates": hot,
            }
        )
        log(
            f"W4 renew_many {RENEW_LEASES} leases: {value:.1f} ms; {hot} of {updates} row updates HOT"
        )

    # -- W3 ----------------------------------------------------------------------

    async def scale(self) -> None:
        """W3, once a bench: claim+complete as one table grows, then the churn run."""
        import w3

        plan = self.plan
        url = self.fresh(OURS, "w3")
        origin = dt.datetime.now(dt.UTC) - w3.SPREAD
        step = w3.SPREAD / max(plan.w3_sizes)
        for rows in sorted(plan.w3_sizes):
            label = w3.human(rows)
            log(
                f"W3 growing taskboard.jobs to {rows:,} finished jobs (INSERT ... SELECT generate_series)"
            )
            grown = await asyncio.to_thread(w3.grow, url, rows, origin, step)
            started = time.perf_counter()
            checkpoint(self.server)
            grown["checkpoint_s"] = time.perf_counter() - started
            # Growing writes gigabytes the kernel may still be writing back:
            # let that finish, so the sample times the table, not the disk
            # catching up with the growth step.
            started = time.perf_counter()
            os.sync()
            await asyncio.sleep(W3_SETTLE_S)
            grown["settle_s"] = time.perf_counter() - started
            started = time.perf_counter()
            got = await w3.sample(url, plan.w3_cycles, plan.w3_blocks)
            sample_s = time.perf_counter() - started
            medians = [statistics.median(b) for b in got["blocks"]]
            line = Line("W3", f"claim+complete, {label} finished", "ms", False)
            for value in medians:
                self.samples.add(line, OURS, value)
            self.record(
                {
                    "workload": "W3",
                    "part": "scale",
                    **grown,
                    "sample_s": sample_s,
                    "cycles": plan.w3_cycles,
                    "block_p50_ms": medians,
                    "block_p99_ms": [w3.quantile(b, 0.99) for b in got["blocks"]],
                }
            )
            log(
                f"W3 {label}: grew {grown['inserted']:,} rows in {grown['insert_s']:.1f} s "
                f"+ VACUUM ANALYZE {grown['vacuum_analyze_s']:.1f} s + CHECKPOINT "
                f"{grown['checkpoint_s']:.1f} s; table {grown['heap_bytes'] / 2**20:,.0f} MB "
                f"+ indexes {grown['index_bytes'] / 2**20:,.0f} MB; claim+complete p50 "
                f"{', '.join(f'{v:.3f}' for v in medians)} ms ({sample_s:.1f} s)"
            )
            await self.dashboard_pages(url, rows)
        drop_database(self.server.url(), f"w3_{OURS}")
        await self.dashboard_busy(max(plan.w3_sizes))
        if plan.w3_churn <= 0:
            return
        for prune_by in ("cron", "workers"):
            await self.w3_churn(plan.w3_churn, prune_by)

    async def dashboard_busy(self, rows: int) -> None:
        """W3's dashboard on a busy table: a tenth of `rows` finished within the last hour."""
        import dashboard
        import w3

        capped = min(rows, 1_000_000)
        url = self.fresh(OURS, "w3dash")
        log(f"W3 dashboard: {capped:,} finished jobs, a tenth of them within the last hour")
        await asyncio.to_thread(dashboard.grow_busy, url, capped)
        checkpoint(self.server)
        await self.dashboard_pages(url, capped, f"{w3.human(capped)} finished, busy hour")
        drop_database(self.server.url(), f"w3dash_{OURS}")

    async def dashboard_pages(self, url: str, rows: int, label: str | None = None) -> None:
        """W3's dashboard: each page's fetch time on the table as grown (bench/dashboard.py)."""
        import dashboard
        import w3

        label = label or f"{w3.human(rows)} finished"
        got = await asyncio.to_thread(dashboard.measure, url, max(1, rows // 2))
        for page, times in got.items():
            line = Line("W3", f"dashboard {page}, {label}", "ms", False)
            for value in times:
                self.samples.add(line, OURS, value)
        self.record(
            {
                "workload": "W3",
                "part": "dashboard",
                "rows": rows,
                "table": label,
                "pages_ms": {
                    page: {
                        "p50": statistics.median(times),
                        "p95": w3.quantile(times, 0.95),
                        "max": max(times),
                    }
                    for page, times in got.items()
                },
            }
        )
        log(
            f"W3 {label} dashboard p50: "
            + ", ".join(f"{page} {statistics.median(t):.1f} ms" for page, t in got.items())
        )

    async def w3_churn(self, n: int, prune_by: str) -> None:
        """One churn run; prune_by "workers" is the retention setting's way."""
        import w3

        plan = self.plan
        url = self.fresh(OURS, "w3churn")
        who = "an operator's cron" if prune_by == "cron" else "each consumer between cycles"
        log(
            f"W3 churn: {n:,} jobs through the API, at most {plan.w3_backlog:,} queued, "
            f"{plan.w3_consumers} connections of claim({w3.CHURN_BATCH}) + complete_many, "
            f"prune by {who} every {plan.w3_sample_s:g} s"
        )
        started = time.perf_counter()
        got = await w3.churn(
            url,
            n,
            backlog=plan.w3_backlog,
            consumers=plan.w3_consumers,
            sample_s=plan.w3_sample_s,
            prune_by=prune_by,
        )
        wall = time.perf_counter() - started
        s = got["summary"]
        # A cycle: one claim(batch => CHURN_BATCH) and the complete_many of what it got.
        churn = f"churn {w3.human(n)}"
        if prune_by == "cron":
            lines = [
                (f"{churn}, throughput", "jobs/s", True, s["jobs_per_s"]),
                (f"{churn}, cycle p50, first 10%", "ms", False, s["p50_first_tenth_ms"]),
                (f"{churn}, cycle p50, last 10%", "ms", False, s["p50_last_tenth_ms"]),
                (f"{churn}, cycle p99", "ms", False, s["p99_ms"]),
                (f"{churn}, most dead tuples", "rows", False, s["max_dead_tup"]),
                (f"{churn}, table+indexes peak", "MB", False, s["peak_total_bytes"] / 2**20),
                (f"{churn}, table+indexes end", "MB", False, s["end_total_bytes"] / 2**20),
            ]
        else:
            churn += ", workers prune"
            lines = [
                (f"{churn}, throughput", "jobs/s", True, s["jobs_per_s"]),
                (f"{churn}, cycle p50, last 10%", "ms", False, s["p50_last_tenth_ms"]),
                (f"{churn}, cycle p99", "ms", False, s["p99_ms"]),
                (f"{churn}, table+indexes end", "MB", False, s["end_total_bytes"] / 2**20),
            ]
        for config, unit, higher, value in lines:
            self.samples.add(Line("W3", config, unit, higher), OURS, value)
        self.record(
            {
                "workload": "W3",
                "part": "churn",
                "jobs": n,
                "backlog": plan.w3_backlog,
                "consumers": plan.w3_consumers,
                "batch": w3.CHURN_BATCH,
                "sample_s": plan.w3_sample_s,
                "prune_by": prune_by,
                "wall_s": wall,
                **s,
                "series": got["series"],
            }
        )
        log(
            f"W3 churn: {s['jobs_per_s']:,.0f} jobs/s over {s['seconds']:.0f} s; cycle p50 "
            f"{s['p50_first_tenth_ms']:.2f} ms first 10%, {s['p50_last_tenth_ms']:.2f} ms last 10%; "
            f"most dead tuples {s['max_dead_tup']:,}; {s['autovacuums']} autovacuums; "
            f"pruned {s['pruned_rows']:,} rows in {s['prune_calls']} calls"
        )
        for text in w3.series_lines(got["series"]):
            log(text)
        drop_database(self.server.url(), f"w3churn_{OURS}")

    # -- floor -------------------------------------------------------------------

    def floor(self, url: str, batch: int, clients: int) -> None:
        got = floor.run(
            self.server, url, batch=batch, clients=clients, seconds=self.plan.floor_seconds
        )
        line = Line(
            "floor",
            f"{batch} a claim, {clients} client{'s' if clients > 1 else ''}",
            "jobs/s",
            True,
        )
        self.samples.add(line, FLOOR, got["jobs_per_s"])
        self.record({"workload": "floor", "batch": batch, "clients": clients, **got})
        log(f"floor {batch} a claim, {clients} clients: {got['jobs_per_s']:,.0f} jobs/s")

    # -- the run -----------------------------------------------------------------

    async def run(self, workloads: set[str]) -> None:
        await self.install()
        floor_url = floor.prepare(self.server) if "floor" in workloads else None
        systems = self.plan.systems
        for run in range(self.plan.runs):
            order = systems[run % len(systems) :] + systems[: run % len(systems)]
            log(f"run {run + 1} of {self.plan.runs}: {', '.join(order)}")
            if "w1" in workloads:
                for concurrency in self.plan.concurrencies:
                    for name in order:
                        await self.drain(name, concurrency, run)
            if "w2" in workloads:
                for name in order:
                    if name not in VARIANTS:  # the variants are about claim: W1 only
                        await self.latency(name, run)
            if "w4" in workloads and OURS in systems:
                await self.renewal(run)
            if "w5" in workloads and OURS in systems:
                for processes in FANOUT_PROCESSES:
                    await self.fanout(processes, run)
            if "w6" in workloads:
                for name in order:
                    if name in IO_SYSTEMS:
                        await self.io_bound(name, run)
            if "w7" in workloads and OURS in systems:
                for processes in CPU_PROCESSES:
                    await self.cpu_bound(processes, run)
            if floor_url is not None:
                for batch, clients in self.plan.floor_configs:
                    self.floor(floor_url, batch, clients)
        if "w3" in workloads and OURS in systems:
            await self.scale()  # big: once a bench, after every run of the others


def machine() -> dict[str, Any]:
    model = ""
    with open("/proc/cpuinfo") as f:
        for text in f:
            if text.startswith("model name"):
                model = text.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(next(t for t in f if t.startswith("MemTotal")).split()[1])
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def git_commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "pydriver", "db", "bench"],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return result.stdout.strip() + ("+uncommitted changes" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="N=2,000, one run, fewer configurations"
    )
    parser.add_argument("--runs", type=int, help="runs of every workload (full: 3)")
    parser.add_argument("--jobs", type=int, help="W1 jobs (full: 20,000)")
    parser.add_argument("--systems", help="comma-separated subset of " + ",".join(SYSTEMS))
    parser.add_argument("--only", help="comma-separated subset of " + ",".join(WORKLOADS))
    parser.add_argument(
        "--w3-rows",
        help="W3's table sizes, comma-separated, e.g. 10k,1M (full: 10k,1M,10M; quick: 10k,100k)",
    )
    parser.add_argument(
        "--w3-churn",
        help="jobs through W3's churn run, e.g. 200k; 0 skips it (full: 1M; quick: 20k)",
    )
    parser.add_argument(
        "--stat-statements",
        action="store_true",
        help="load pg_stat_statements and print the top statements per database",
    )
    parser.add_argument(
        "--py-spy", type=Path, help="record Taskboard's drain workers with py-spy into DIR"
    )
    parser.add_argument(
        "--cold-stats",
        action="store_true",
        help="skip the ANALYZE after W1's enqueue: drain a backlog the planner has no statistics for",
    )
    parser.add_argument(
        "--taskboard-sql",
        type=Path,
        help="run this SQL file in Taskboard's template after deploying it, to measure "
        "a candidate change to db/functions before making it (shown in the JSON)",
    )
    parser.add_argument(
        "--results", type=Path, default=HERE / "results", help="where the JSON goes"
    )
    args = parser.parse_args()

    for name in [k for k in os.environ if k.startswith("TASKBOARD_")]:
        del os.environ[name]  # the bench decides every setting itself
    plan = QUICK if args.quick else FULL
    if args.runs:
        plan.runs = args.runs
    if args.jobs:
        plan.jobs = args.jobs
    if args.w3_rows:
        import w3

        plan.w3_sizes = sorted({w3.parse_count(x) for x in args.w3_rows.split(",") if x})
    if args.w3_churn:
        import w3

        plan.w3_churn = w3.parse_count(args.w3_churn)
    if args.systems:
        plan.systems = [s for s in args.systems.split(",") if s]
        unknown = set(plan.systems) - set(SYSTEMS)
        if unknown:
            parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    # Systems this machine cannot run (pg-boss without its npm install) are left out, and
    # the report says why.
    skipped = not_run(plan.systems)
    for name, why in skipped.items():
        log(f"{SYSTEMS[name].label} will not run: {why}")
    plan.systems = [s for s in plan.systems if s not in skipped]
    if not plan.systems:
        parser.error("no system left to run")
    workloads = set((args.only or ",".join(WORKLOADS)).split(","))
    if workloads - set(WORKLOADS):
        parser.error(f"unknown workloads: {', '.join(sorted(workloads - set(WORKLOADS)))}")
    if args.py_spy:
        args.py_spy.mkdir(parents=True, exist_ok=True)

    started_at = dt.datetime.now(dt.UTC)
    commit = git_commit()  # what the run measures: read before the code can change under it
    load_before = os.getloadavg()
    wall = time.perf_counter()
    server = bench_server(stat_statements=args.stat_statements)
    statements: dict[str, Any] = {}
    try:
        log(f"starting a throwaway PostgreSQL 18 ({plan.mode} mode)")
        server.start()
        settings = reported_settings(server)
        with tempfile.TemporaryDirectory(prefix="taskboard-bench-work-") as work:
            bench = Bench(
                plan,
                server,
                Path(work),
                py_spy=args.py_spy,
                analyze=not args.cold_stats,
                taskboard_sql=args.taskboard_sql,
            )
            asyncio.run(bench.run(workloads))
        if args.stat_statements:
            statements = top_statements(server)
    finally:
        server.remove()
    wall_s = time.perf_counter() - wall
    load_after = os.getloadavg()

    labels = {name: SYSTEMS[name].label for name in SYSTEMS}
    versions = {name: SYSTEMS[name].version() for name in plan.systems}
    info = machine()
    info["loadavg_before"] = [round(x, 2) for x in load_before]
    info["loadavg_after"] = [round(x, 2) for x in load_after]
    doc = {
        "started_at": started_at.isoformat(timespec="seconds"),
        "mode": plan.mode,
        "wall_s": round(wall_s, 1),
        "commit": commit,
        "plan": asdict(plan),
        "analyze_after_enqueue": not args.cold_stats,
        "taskboard_sql": None if args.taskboard_sql is None else args.taskboard_sql.read_text(),
        "machine": info,
        "postgres": settings,
        "versions": versions,
        "not_run": skipped,
        "results": to_json(bench.samples),
        "details": bench.details,
        "top_statements": statements,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"{started_at.strftime('%Y%m%dT%H%M%SZ')}-{plan.mode}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")

    print()
    print(
        f"Taskboard benchmark, {plan.mode} mode: {plan.runs} run(s), W1 N={plan.jobs:,}, "
        f"W2 {plan.latency_jobs:,} jobs at {LATENCY_RATE:g}/s, commit {doc['commit']}"
    )
    if args.taskboard_sql is not None:
        print(f"CANDIDATE: Taskboard measured with {args.taskboard_sql} applied after its deploy")
    if args.cold_stats:
        print("cold statistics: no ANALYZE between W1's enqueue and its drain")
    print(
        f"machine: {info['cpus']} CPUs ({info['cpu_model']}), {info['ram_gib']} GiB RAM, "
        f"Linux {info['kernel']}, Python {info['python']}; load average (1/5/15 min) "
        f"{'/'.join(map(str, info['loadavg_before']))} before, {'/'.join(map(str, info['loadavg_after']))} after"
    )
    print("PostgreSQL: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print("versions: " + ", ".join(f"{labels[k]} {v}" for k, v in versions.items()))
    print()
    print(table(bench.samples, plan.systems, labels, OURS))
    print()
    print(
        "cells: median of the runs ± half their range (% of the median); "
        "TB vs X: how many times better Taskboard is (>1: Taskboard ahead)."
    )
    for text in targets(bench.samples, plan):
        print(f"target: {text}")
    for name, why in skipped.items():
        print(f"{SYSTEMS[name].label} did not run: {why}")
    print(
        f"wall time {wall_s / 60:.1f} min; JSON: {out.relative_to(HERE.parent) if out.is_relative_to(HERE.parent) else out}"
    )
    if statements:
        print()
        for db, rows in statements.items():
            print(f"pg_stat_statements, {db}:")
            for row in rows:
                print(
                    f"  {row['calls']:>8} calls {row['mean_ms']:8.3f} ms mean {row['total_ms']:9.0f} ms total  {row['query']}"
                )
    return 0


def targets(samples: Samples, plan: Plan) -> list[str]:
    """The performance targets bench/README.md states, each with this run's figures and
    whether it was met."""

    def median(key: str, system: str) -> float | None:
        line = next((s for s in samples.lines if s.key == key), None)
        return None if line is None else samples.median(line, system)

    def starting(prefix: str, system: str) -> list[tuple[str, float]]:
        return [
            (line.key, v)
            for line in samples.lines
            if line.key.startswith(prefix) and (v := samples.median(line, system)) is not None
        ]

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    peers = [s for s in plan.systems if s not in VARIANTS and s != OURS]
    python_peers = [s for s in peers if s not in NODE_PEERS]
    out = []
    # Queue control's cost, against Taskboard itself in the same run.
    for c in plan.concurrencies:
        ours = median(f"W1 drain c={c}", OURS)
        for variant, what in VARIANTS.items():
            other = median(f"W1 drain c={c}", variant)
            if ours and other:
                out.append(f"W1 c={c}: {what} x{other / ours:.2f} of plain Taskboard")
    for c in plan.concurrencies:
        ours = median(f"W1 drain c={c}", OURS)
        best = max((v for p in python_peers if (v := median(f"W1 drain c={c}", p))), default=None)
        if ours and best:
            out.append(f"W1 c={c}: x{ours / best:.2f} the fastest Python peer (no target)")
    top, low = max(plan.concurrencies), min(plan.concurrencies)
    ours, batched = median(f"W1 drain c={top}", OURS), median(f"W1 drain c={top}", BATCHED_PEER)
    if ours and batched:
        out.append(
            f"W1 c={top}: x{ours / batched:.2f} Graphile Worker batched "
            f"(target: ahead: {verdict(ours > batched)})"
        )
    ours, raw = median(f"W1 drain c={top}", OURS), median("floor 50 a claim, 8 clients", FLOOR)
    if ours and raw:
        out.append(
            f"W1 c={top}: {ours / raw:.0%} of the raw-SQL floor at 50 a claim, 8 clients "
            f"(target 40%: {verdict(ours >= 0.4 * raw)})"
        )
    ours, boss = median(f"W1 drain c={low}", OURS), median(f"W1 drain c={low}", "pgboss")
    if ours and boss:
        out.append(
            f"W1 c={low}: x{ours / boss:.2f} pg-boss, which leases up to 10 x C jobs ahead "
            f"(target: ahead: {verdict(ours > boss)})"
        )
    ours = median("W2 latency p50", OURS)
    graphile = min(
        (v for s in NODE_PEERS if s.startswith("graphile") and (v := median("W2 latency p50", s))),
        default=None,
    )
    if ours and graphile:
        out.append(
            f"W2 p50: {ours:.2f} ms, Graphile Worker's best {graphile:.2f} ms "
            f"(target: at or below: {verdict(ours <= graphile)})"
        )
    ours = median("W2 latency p99", OURS)
    best = min((v for s in peers if (v := median("W2 latency p99", s))), default=None)
    if ours and best:
        out.append(
            f"W2 p99: {ours:.2f} ms, best peer {best:.2f} ms (target: the best: {verdict(ours <= best)})"
        )
    fanout = starting("W5 ", OURS)
    if len(fanout) > 1:
        (_, one), (key, most) = fanout[0], fanout[-1]
        out.append(
            f"W5: {key.removeprefix('W5 ')}: x{most / one:.2f} of one process "
            f"(target x0.8 or more: {verdict(most >= 0.8 * one)})"
        )
    for _key, rate in starting("W6 ", OURS):
        out.append(f"W6: {rate:,.0f} jobs/s (target 3,000: {verdict(rate >= 3000)})")
    cpu = starting("W7 ", OURS)
    if len(cpu) > 1:
        (_, one), (key, most) = cpu[0], cpu[-1]
        out.append(f"W7: {key.removeprefix('W7 ')}: x{most / one:.2f} of one process")
    import w3

    if len(plan.w3_sizes) > 1:
        small, big = min(plan.w3_sizes), max(plan.w3_sizes)
        low = median(f"W3 claim+complete, {w3.human(small)} finished", OURS)
        high = median(f"W3 claim+complete, {w3.human(big)} finished", OURS)
        if low and high:
            ok = "met" if high <= 1.3 * low else "NOT met"
            where = (
                ""
                if big >= 10_000_000
                else f" (the target is set at 10M; this run stopped at {w3.human(big)})"
            )
            out.append(
                f"W3: claim+complete p50 {high:.3f} ms with {w3.human(big)} finished jobs, "
                f"x{high / low:.2f} the {low:.3f} ms with {w3.human(small)} (target x1.3 or less: {ok}){where}"
            )
    return out


def top_statements(server: Server, limit: int = 8) -> dict[str, Any]:
    """The statements that took the most time, per benchmark database (needs --stat-statements)."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        rows = conn.execute(
            """
            SELECT d.datname, s.calls, s.total_exec_time, s.mean_exec_time, s.query
              FROM pg_stat_statements AS s
              JOIN pg_database AS d ON d.oid = s.dbid
             WHERE d.datname NOT LIKE 'tpl_%%' AND d.datname <> 'postgres'
             ORDER BY d.datname, s.total_exec_time DESC
            """
        ).fetchall()
    out: dict[str, list[dict[str, Any]]] = {}
    for db, calls, total, mean, query in rows:
        bucket = out.setdefault(db, [])
        if len(bucket) < limit:
            bucket.append(
                {
                    "calls": calls,
                    "total_ms": total,
                    "mean_ms": mean,
                    "query": " ".join(query.split())[:150],
                }
            )
    return out


if __name__ == "__main__":
    sys.exit(main())
