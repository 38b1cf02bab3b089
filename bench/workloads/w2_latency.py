"""W2 latency: an idle worker (concurrency LATENCY_CONCURRENCY); jobs enqueued one at a
time, each committed on its own, at LATENCY_RATE a second. Latency = handler start - the
producer's clock right after its commit returned (one host, one clock); negative
latencies are kept, and the percentiles from before the enqueue call are given too."""

from __future__ import annotations

import asyncio
import json
import statistics
import time

from measure import Bench, log
from report import Line
from systems import SYSTEMS

LATENCY_RATE = 50.0  # jobs/s in W2
LATENCY_CONCURRENCY = 8
LATENCY_WARMUP_JOBS = 10
READY_TIMEOUT_S = 60.0


async def latency(bench: Bench, name: str, run: int) -> None:
    system = SYSTEMS[name]
    m = bench.plan.latency_jobs
    url = bench.fresh(name, "w2")
    out = bench.work / f"latency-{name}-{run}.json"
    proc = await asyncio.create_subprocess_exec(
        *bench.worker_argv(name, url, LATENCY_CONCURRENCY, "latency", m, out),
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
        bench.samples.add(Line("W2", f"latency {label}", "ms", False), name, value)
    # From before the enqueue call instead: commit included, but immune to the
    # producer being scheduled late after its commit (the negative latencies).
    call = statistics.quantiles(
        sorted((starts[s] - sent[s]) * 1000 for s in range(m)), n=100, method="inclusive"
    )
    enqueue_ms = statistics.median((committed[s] - sent[s]) * 1000 for s in range(m))
    bench.samples.add(
        Line("W2", "enqueue one job, call to commit, p50", "ms", False), name, enqueue_ms
    )
    bench.record(
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
