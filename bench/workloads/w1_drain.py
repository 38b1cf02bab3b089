"""W1 drain: N no-op jobs enqueued up front with the system's batch API (chunks of
ENQUEUE_CHUNK, timed), ANALYZE (the statistics autovacuum would have in steady state;
--cold-stats skips it), then one worker process at each concurrency until every job is
finished in the database. jobs/s = N / (all finished - first handler start); worker
start-up is not counted. Server CPU per job: the whole PostgreSQL server's CPU time over
the same window (bench/server.py's ServerCpu), divided by N."""

from __future__ import annotations

from measure import ENQUEUE_CHUNK, Bench, analyze, checkpoint, chunks, log
from report import Line
from systems import SYSTEMS


async def drain(bench: Bench, name: str, concurrency: int, run: int) -> None:
    system = SYSTEMS[name]
    n = bench.plan.jobs
    url = bench.fresh(name, "w1")
    enqueue_s = await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    out = bench.work / f"drain-{name}-{concurrency}-{run}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(name, url, concurrency, n, out)
    rate = n / drain_s
    bench.samples.add(
        Line("W1", f"enqueue {n:,} (batches of {ENQUEUE_CHUNK:,})", "jobs/s", True),
        name,
        n / enqueue_s,
    )
    bench.samples.add(Line("W1", f"drain c={concurrency}", "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W1", f"server CPU per job c={concurrency}", "µs", False),
        name,
        server_cpu["us_per_job"],
    )
    bench.record(
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
            "server_cpu": server_cpu,
        }
    )
    log(
        f"W1 {name} c={concurrency}: enqueue {n / enqueue_s:,.0f}/s, drain {rate:,.0f} jobs/s, "
        f"server CPU {server_cpu['us_per_job']:.0f} µs/job"
    )
