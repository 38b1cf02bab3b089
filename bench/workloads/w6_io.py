"""W6 I/O-bound: each handler awaits IO_WORK_MS (an API call), IO_CONCURRENCY at once, on
IO_CONNECTIONS connections in all; the ceiling is IO_CONCURRENCY / IO_WORK_MS jobs/s."""

from __future__ import annotations

from measure import ENQUEUE_CHUNK, Bench, analyze, checkpoint, chunks, log
from report import Line
from systems import SYSTEMS

# W6, I/O-bound: each handler awaits IO_WORK_MS (an API call), IO_CONCURRENCY at once,
# on IO_CONNECTIONS connections in all; the ceiling is IO_CONCURRENCY / IO_WORK_MS jobs/s.
IO_WORK_MS = 50
IO_CONCURRENCY = 200
IO_CONNECTIONS = 10
# The systems whose worker takes W6's options (pg-boss's Node worker does not).
IO_SYSTEMS = ("taskboard", "procrastinate", "pgqueuer", "graphile", "graphile-batched", "oban")


async def io_bound(bench: Bench, name: str, run: int) -> None:
    """W6: io_jobs queued jobs, each handler awaiting IO_WORK_MS, IO_CONCURRENCY at once
    on IO_CONNECTIONS connections."""
    system = SYSTEMS[name]
    n = bench.plan.io_jobs
    url = bench.fresh(name, "w6")
    await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    out = bench.work / f"io-{name}-{run}.json"
    extra = (f"--work-ms={IO_WORK_MS}", f"--connections={IO_CONNECTIONS}")
    _, drain_s, server_cpu = await bench.timed_drain(name, url, IO_CONCURRENCY, n, out, extra)
    rate = n / drain_s
    config = (
        f"{n:,} jobs awaiting {IO_WORK_MS} ms, c={IO_CONCURRENCY} on {IO_CONNECTIONS} connections"
    )
    bench.samples.add(Line("W6", config, "jobs/s", True), name, rate)
    bench.samples.add(Line("W6", "server CPU per job", "µs", False), name, server_cpu["us_per_job"])
    bench.record(
        {
            "workload": "W6",
            "system": name,
            "run": run,
            "jobs": n,
            "drain_s": drain_s,
            "server_cpu": server_cpu,
        }
    )
    ceiling = IO_CONCURRENCY * 1000 / IO_WORK_MS
    log(
        f"W6 {name}: {rate:,.0f} jobs/s (ceiling {ceiling:,.0f}), "
        f"server CPU {server_cpu['us_per_job']:.0f} µs/job"
    )
