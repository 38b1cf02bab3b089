"""Benchmark Taskboard against its peers and a raw-SQL floor; print one table.

    bench/.venv/bin/python bench/run.py            # full: make bench
    bench/.venv/bin/python bench/run.py --quick    # a first look: make bench-quick

One throwaway PostgreSQL 18 (bench/server.py: a taskboard_dev.server.Server)
serves the whole run; each measurement gets a fresh database copied from a
per-system template and starts right after a CHECKPOINT. Systems take turns
within each run, in an order that rotates from run to run.

Each workload is a module of bench/workloads/ (w1_drain, w2_latency, w3_scale,
w4_renewal, w5_fanout, w6_io, w7_cpu, w8_backlog, w9_keys, w10_rate, w11_fanin,
w12_graphs, pgbench_floor);
bench/measure.py holds what they share (the plan, the Bench: server, fresh databases, worker command lines, samples).

W1 drain: N no-op jobs enqueued up front with the system's batch API
  (chunks of ENQUEUE_CHUNK, timed), ANALYZE (the statistics autovacuum
  would have in steady state; --cold-stats skips it), then one worker process at each
  concurrency until every job is finished in the database. jobs/s = N /
  (all finished - first handler start); worker start-up is not counted.
W2 latency: an idle worker (concurrency LATENCY_CONCURRENCY); jobs enqueued
  one at a time, each committed on its own, at w2_latency.LATENCY_RATE a second.
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
W8 backlog (Taskboard only, once a bench, after the runs): the dashboard's
  overview, job list and /metrics on a retry backlog (backlog_jobs queued jobs
  with 5 old errors each, big_jobs jobs of big_bytes; bench/backlog.py says
  how); target: the overview and the job list within 200 ms.
W9 keys (Taskboard only): 1,000 concurrency keys, N jobs in key runs, drained at c=32
  on a queue with a key limit of 1 and on one without (the control); jobs/s, server
  CPU and claim's cost in the database (pg_stat_user_functions) of each, and a check
  of the jobs' stamps that the limit held.
W10 rate (Taskboard only): 5,000 jobs drained at c=32 on a queue with a rate limit of
  500 starts a second and on one without (the control); starts/s against the limit,
  server CPU, claim's mean time a call (pg_stat_user_functions), and the most starts
  the jobs' stamps put in any 1 s window, which must be 500 or fewer.
  Then a queue under a rate per key with 16,000 full keys ahead (and, as the control,
  none): a claim of it at batch 1 and 32, and a fast queue's 2,000 jobs drained beside
  it by the same worker.
W11 fan-in (Taskboard only): 10,000 jobs and one that depends on all of them, drained at
  c=32, and the same 10,001 jobs without the dependency (the control); jobs/s, server CPU,
  claim's and complete_many's mean time a call (pg_stat_user_functions), the dependent's
  enqueue, and its start after its last dependency's finish, which must not be negative.
W12 big graphs (Taskboard only, once a bench, after the runs; over TCP loopback): an
  enqueue naming 1,000 / 10,000 / 100,000 dependencies; complete and cancel of a job with
  10,000 / 100,000 (and with --w12-million 1,000,000) dependents, then the claims that
  settle the rest; cancel of the head of a 10,000-link chain; each against the 5 s bar.
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
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import floor
from measure import OURS, TRANSPORTS, Bench, Plan, log, over
from report import FLOOR, Samples, table, to_json
from server import bench_server, reported_settings
from systems import SYSTEMS, not_run
from workloads import (
    pgbench_floor,
    w1_drain,
    w2_latency,
    w3_scale,
    w4_renewal,
    w5_fanout,
    w6_io,
    w7_cpu,
    w8_backlog,
    w9_keys,
    w10_rate,
    w11_fanin,
    w12_graphs,
    w13_xmin,
)

from taskboard_dev.server import Server

# Taskboard under other conditions, measured beside it (not peers).
VARIANTS = {
    "taskboard-limited": "a queue limit it never reaches runs at",
    "taskboard-discard": "a queue that discards its jobs at completion runs at",
    "taskboard-metrics": "the worker with Prometheus metrics on (scraped every 5 s) runs at",
    "taskboard-2cycles": "two claim/complete cycles in flight (cycles_in_flight = 2) run at",
}
NODE_PEERS = ("pgboss", "graphile", "graphile-batched")  # not Python peers
FANOUT_TARGET = 0.6  # W5: 16 processes against one, 32 handlers in all
BATCHED_PEER = "graphile-batched"  # the fastest peer at W1 c=32: its own target line
# The peers that delete a finished job (the others keep it, as Taskboard does): the server
# CPU target compares Taskboard with the lowest of those that keep them.
DELETES_FINISHED = ("graphile", "graphile-batched")
WORKLOADS = (
    "w1",
    "w2",
    "w4",
    "w5",
    "w6",
    "w7",
    "w8",
    "w9",
    "w10",
    "w11",
    "w12",
    "w13",
    "floor",
    "w3",
)  # --only's choices, all on by default


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
    xmin_baseline_s=20.0,
    xmin_hold_s=60.0,
    xmin_after_s=40.0,
    cpu_jobs=400,
    backlog_jobs=60_000,
    big_jobs=60,
    big_bytes=2**20 // 2,
)


async def run_workloads(bench: Bench, workloads: set[str]) -> None:
    await bench.install()
    floor_url = floor.prepare(bench.server) if "floor" in workloads else None
    systems = bench.plan.systems
    for run in range(bench.plan.runs):
        order = systems[run % len(systems) :] + systems[: run % len(systems)]
        log(f"run {run + 1} of {bench.plan.runs}: {', '.join(order)}")
        if "w1" in workloads:
            for transport in TRANSPORTS:
                for concurrency in bench.plan.concurrencies:
                    for name in order:
                        await w1_drain.drain(bench, name, concurrency, run, transport)
        if "w2" in workloads:
            for name in order:
                if name not in VARIANTS:  # the variants are about claim: W1 only
                    await w2_latency.latency(bench, name, run)
        if "w4" in workloads and OURS in systems:
            await w4_renewal.renewal(bench, run)
        if "w5" in workloads:
            for transport in TRANSPORTS if OURS in systems else ():
                for processes in w5_fanout.FANOUT_PROCESSES:
                    await w5_fanout.fanout(bench, processes, run, transport)
                for processes in w5_fanout.FANOUT_PROCESSES[1:]:
                    await w5_fanout.fanout(bench, processes, run, transport, "processes")
            for name in order:
                if name != OURS and name not in VARIANTS:
                    for processes in w5_fanout.FANOUT_PROCESSES:
                        await w5_fanout.fanout_peer(bench, name, processes, run)
        if "w6" in workloads:
            for name in order:
                if name in w6_io.IO_SYSTEMS:
                    await w6_io.io_bound(bench, name, run)
        if "w7" in workloads and OURS in systems:
            for processes in w7_cpu.CPU_PROCESSES:
                await w7_cpu.cpu_bound(bench, processes, run)
        if "w9" in workloads and OURS in systems:
            await w9_keys.keys(bench, run)
        if "w10" in workloads and OURS in systems:
            await w10_rate.rate(bench, run)
        if "w11" in workloads and OURS in systems:
            await w11_fanin.fanin(bench, run)
        if floor_url is not None:
            for batch, clients in bench.plan.floor_configs:
                pgbench_floor.run_floor(bench, floor_url, batch, clients)
    if "w8" in workloads and OURS in systems:
        await w8_backlog.backlog(bench)  # once a bench: its table takes a while to build
    if "w12" in workloads and OURS in systems:
        await w12_graphs.graphs(bench, bench.plan.w12_million)  # once a bench, as W8
    if "w13" in workloads and OURS in systems:
        await w13_xmin.held(bench)  # once a bench: its hold lasts minutes
    if "w3" in workloads and OURS in systems:
        await w3_scale.scale(bench)  # big: once a bench, after every run of the others


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
        "--xmin-hold",
        type=float,
        help="seconds W13 holds the xmin (full: 600; quick: 60)",
    )
    parser.add_argument(
        "--w12-million",
        action="store_true",
        help="W12 also completes and cancels a job with 1,000,000 dependents (a few minutes more)",
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
    if args.w12_million:
        plan.w12_million = True
    if args.xmin_hold:
        plan.xmin_hold_s = args.xmin_hold
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
    # W1, W5 and W12 connect over TCP loopback, as applications do: only then does the
    # server listen.
    server = bench_server(
        stat_statements=args.stat_statements, tcp=bool({"w1", "w5", "w12"} & workloads)
    )
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
            asyncio.run(run_workloads(bench, workloads))
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
        f"W2 {plan.latency_jobs:,} jobs at {w2_latency.LATENCY_RATE:g}/s, commit {doc['commit']}"
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

    def starting(prefix: str, system: str, unit: str = "jobs/s") -> list[tuple[str, float]]:
        return [
            (line.key, v)
            for line in samples.lines
            if line.key.startswith(prefix)
            and line.unit == unit
            and (v := samples.median(line, system)) is not None
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
    # The W1 targets hold over TCP loopback, as applications connect.
    tcp = over("tcp")
    for c in plan.concurrencies:
        ours = median(f"W1 drain c={c}{tcp}", OURS)
        batched = median(f"W1 drain c={c}{tcp}", BATCHED_PEER)
        if ours and batched:
            out.append(
                f"W1 c={c}, TCP: {ours:,.0f} jobs/s, x{ours / batched:.2f} Graphile Worker "
                f"batched's {batched:,.0f}, which leases ahead (target: ahead, leasing none "
                f"ahead: {verdict(ours > batched)})"
            )
    ours, raw = median(f"W1 drain c={top}{tcp}", OURS), median("floor 50 a claim, 8 clients", FLOOR)
    if ours and raw:
        out.append(
            f"W1 c={top}, TCP: {ours / raw:.0%} of the raw-SQL floor at 50 a claim, 8 clients "
            f"(target 40%: {verdict(ours >= 0.4 * raw)})"
        )
    for c in plan.concurrencies:
        key = f"W1 server CPU per job c={c}{tcp}"
        ours, batched = median(key, OURS), median(key, BATCHED_PEER)
        keepers = [(v, p) for p in peers if p not in DELETES_FINISHED and (v := median(key, p))]
        if ours and batched:
            kept = ""
            if keepers:
                best, who = min(keepers)
                kept = f"; the lowest of the peers that keep finished jobs: {SYSTEMS[who].label} {best:.0f} µs"
            out.append(
                f"W1 c={c}, TCP: server CPU {ours:.0f} µs a job, x{ours / batched:.2f} Graphile "
                f"Worker batched's {batched:.0f} µs, which deletes finished jobs{kept} (target: "
                f"at most Graphile batched's, every finished job kept: {verdict(ours <= batched)})"
            )
    drained = median(f"W1 drain c={top}: row versions written per job", OURS)
    hot = median(f"W1 drain c={top}: of them HOT updates per job", OURS)
    wal = median(f"W1 drain c={top}: WAL per job", OURS)
    if drained is not None and hot is not None and wal is not None:
        out.append(
            f"W1 c={top}: a job's claim and completion wrote {drained:.2f} row versions "
            f"({hot:.2f} HOT) and {wal:.0f} WAL bytes (no target)"
        )
    ours, boss = median(f"W1 drain c={low}{tcp}", OURS), median(f"W1 drain c={low}{tcp}", "pgboss")
    if ours and boss:
        out.append(
            f"W1 c={low}, TCP: x{ours / boss:.2f} pg-boss, which leases up to 10 x C jobs ahead "
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
    most = max(w5_fanout.FANOUT_PROCESSES)
    for transport in TRANSPORTS:
        fanout = [
            (key, rate)
            for key, rate in starting("W5 ", OURS)
            if key.endswith(tcp) == (transport == "tcp")
        ]
        one = next((rate for key, rate in fanout if " 1 worker process(es)" in key), None)
        for key, rate in fanout:
            if one and (f" {most} worker process" in key or f"--processes {most} " in key):
                out.append(
                    f"W5: {key.removeprefix('W5 ')}: x{rate / one:.2f} of one process "
                    f"(target x{FANOUT_TARGET} or more: {verdict(rate >= FANOUT_TARGET * one)})"
                )

    def at_most(system: str) -> dict[str, float]:
        """{how: jobs/s} of `system`'s W5 lines at `most` processes over TCP."""
        return {
            key: rate
            for key, rate in starting("W5 ", system)
            if key.endswith(tcp)
            and (f" {most} worker process" in key or f"--processes {most} " in key)
        }

    ours_most = at_most(OURS)
    if ours_most:
        rivals = {peer: max(found.values()) for peer in peers if (found := at_most(peer))}
        if not rivals:
            out.append(
                f"W5 at {most} processes, ahead of every peer (target): NOT met: no peer measured"
            )
        for key, rate in ours_most.items():
            if not rivals:
                break
            best = max(rivals, key=lambda peer: rivals[peer])
            out.append(
                f"W5: {key.removeprefix('W5 ')}: {rate:,.0f} jobs/s, best peer {best} "
                f"{rivals[best]:,.0f} (target: ahead of every peer: {verdict(rate > rivals[best])})"
            )
    before, during = median("W13 baseline throughput", OURS), None
    back = median("W13 back to baseline after the release", OURS)
    during_line = next(
        (
            line
            for line in samples.lines
            if line.key.startswith("W13 xmin held") and line.key.endswith("throughput")
        ),
        None,
    )
    if during_line is not None:
        during = samples.median(during_line, OURS)
    if before and during is not None:
        ok = during >= 0.5 * before and back is not None and back <= 60
        came_back = "never, in the run" if back is None else f"{back:.0f} s"
        out.append(
            f"W13: {during_line.config}: {during:,.0f} jobs/s, {during / before:.0%} of the "
            f"{before:,.0f} before; back to baseline after the release: {came_back} (target: "
            f"50 % or more while held, back within 60 s: {verdict(ok)})"
        )
    else:
        out.append("W13 held xmin (target: 50 % of baseline while held, back within 60 s): not run")
    for _key, rate in starting("W6 ", OURS):
        out.append(f"W6: {rate:,.0f} jobs/s (target 3,000: {verdict(rate >= 3000)})")
    cpu = starting("W7 ", OURS)
    if len(cpu) > 1:
        (_, one), (key, most) = cpu[0], cpu[-1]
        out.append(f"W7: {key.removeprefix('W7 ')}: x{most / one:.2f} of one process")
    keys = {
        line.config: v
        for line in samples.lines
        if line.workload == "W9" and (v := samples.median(line, OURS)) is not None
    }
    limited, control = w9_keys.CASES[0][0], w9_keys.CASES[1][0]
    rates = [
        next(
            (v for config, v in keys.items() if config.startswith("drain ") and config.endswith(c)),
            None,
        )
        for c in (limited, control)
    ]
    ours, mine = keys.get(f"claim per job, {limited}"), keys.get(f"claim per job, {control}")
    if rates[0] and rates[1] and ours and mine:
        call, control_call = keys[f"claim a call, {limited}"], keys[f"claim a call, {control}"]
        out.append(
            f"W9: {limited}: x{rates[0] / rates[1]:.2f} the control's "
            f"jobs/s; claim {ours:.1f} µs a job, x{ours / mine:.2f} the control's "
            f"({call:.3f} against {control_call:.3f} ms a call; no target)"
        )
    rated = {
        line.config: v
        for line in samples.lines
        if line.workload == "W10" and (v := samples.median(line, OURS)) is not None
    }
    limited, control = w10_rate.CASES[0][0], w10_rate.CASES[1][0]
    starts = next(
        (v for c, v in rated.items() if c.startswith("drain ") and c.endswith(limited)), None
    )
    peak = next(
        (v for c, v in rated.items() if c.startswith("most ") and c.endswith(limited)), None
    )
    call, control_call = (
        rated.get(f"claim a call, {limited}"),
        rated.get(f"claim a call, {control}"),
    )
    if starts and peak is not None and call and control_call:
        out.append(
            f"W10: {limited}: {starts:,.0f} starts/s, {starts / w10_rate.RATE_STARTS:.0%} of the "
            f"limit; most in one window {peak:,.0f} (target {w10_rate.RATE_STARTS} or fewer: "
            f"{verdict(peak <= w10_rate.RATE_STARTS)}); claim {call:.3f} against "
            f"{control_call:.3f} ms a call"
        )
    full, empty = w10_rate.FULL_CASES[0][0], w10_rate.FULL_CASES[1][0]
    behind = {
        batch: ms
        for batch in w10_rate.CLAIM_BATCHES
        if (ms := rated.get(f"claim of {w10_rate.FULL_QUEUE} at batch {batch}, {full}")) is not None
    }
    fast = [
        next((v for c, v in rated.items() if c.startswith("drain ") and c.endswith(x)), None)
        for x in (full, empty)
    ]
    if len(behind) == len(w10_rate.CLAIM_BATCHES) and fast[0] and fast[1]:
        out.append(
            f"W10: a claim behind {full}: "
            + ", ".join(
                f"{ms:,.1f} ms at batch {b} (0.5.0's {w10_rate.RED_TEAM_CLAIM_MS[b]:,.0f}: "
                f"{verdict(ms < w10_rate.RED_TEAM_CLAIM_MS[b])})"
                for b, ms in behind.items()
            )
            + f"; the fast queue beside it x{fast[0] / fast[1]:.2f} the control's jobs/s"
        )
    fanned = {
        line.config: v
        for line in samples.lines
        if line.workload == "W11" and (v := samples.median(line, OURS)) is not None
    }
    waiting, control = w11_fanin.CASES[0][0], w11_fanin.CASES[1][0]
    drains = [
        next((v for c, v in fanned.items() if c.startswith("drain ") and c.endswith(x)), None)
        for x in (waiting, control)
    ]
    enqueue_ms = fanned.get(f"enqueue of the last job, {waiting}")
    delay_ms = next((v for c, v in fanned.items() if c.startswith("dependent's start")), None)
    call, control_call = (
        fanned.get(f"complete_many a call, {waiting}"),
        fanned.get(f"complete_many a call, {control}"),
    )
    if drains[0] and drains[1] and enqueue_ms and delay_ms is not None and call and control_call:
        out.append(
            f"W11: {waiting}: x{drains[0] / drains[1]:.2f} the control's jobs/s; "
            f"complete_many {call:.3f} against {control_call:.3f} ms a call; the dependent's "
            f"enqueue {enqueue_ms:,.1f} ms, its start {delay_ms:.2f} ms after its last "
            "dependency's finish (no target)"
        )
    out += w12_graphs.verdicts(
        {
            line.config: v
            for line in samples.lines
            if line.workload == "W12" and (v := samples.median(line, OURS)) is not None
        }
    )
    import backlog

    for line in samples.lines:
        if line.workload == "W8" and (value := samples.median(line, OURS)) is not None:
            page = line.config.removeprefix("dashboard ").split(",")[0]
            if page in backlog.TARGETED:
                ok = verdict(value <= backlog.TARGET_MS)
                out.append(
                    f"W8: {line.config}: p50 {value:.1f} ms "
                    f"(target {backlog.TARGET_MS:.0f} ms: {ok})"
                )
            else:
                out.append(f"W8: {line.config}: p50 {value:.1f} ms (no target)")
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
