"""W1 drain: N no-op jobs enqueued up front with the system's batch API (chunks of
ENQUEUE_CHUNK, timed), ANALYZE (the statistics autovacuum would have in steady state;
--cold-stats skips it), then one worker process at each concurrency until every job is
finished in the database. jobs/s = N / (all finished - first handler start); worker
start-up is not counted. Server CPU per job: the whole PostgreSQL server's CPU time over
the same window (bench/server.py's ServerCpu), divided by N. Each drain runs over the
Unix socket and over TCP loopback (lines marked TCP). What the database wrote, per job:
the rows its tables' statistics count (inserted, updated, of those HOT, deleted) and the
server's WAL (records, full-page images, bytes), for the enqueue and for the drain."""

from __future__ import annotations

from measure import ENQUEUE_CHUNK, Bench, analyze, checkpoint, chunks, log, over, per_job, writes
from report import Line
from systems import SYSTEMS

# The write lines of the table: (name in per_job's figures, label, unit).
WRITE_LINES = (
    ("wal_bytes", "WAL", "bytes"),
    ("versions", "row versions written", "rows"),
    ("hot_updated", "of them HOT updates", "rows"),
    ("deleted", "rows deleted", "rows"),
)


def versions(writes: dict[str, float]) -> dict[str, float]:
    """`writes` with `versions`: the new row versions (every insert and update writes one)."""
    return {**writes, "versions": writes["inserted"] + writes["updated"]}


async def drain(bench: Bench, name: str, concurrency: int, run: int, transport: str) -> None:
    system = SYSTEMS[name]
    n = bench.plan.jobs
    url = bench.fresh(name, "w1", transport)
    before = writes(url)
    enqueue_s = await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    enqueued = writes(url)
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    analyzed = writes(url)
    out = bench.work / f"drain-{name}-{concurrency}-{run}-{transport}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(name, url, concurrency, n, out)
    drained = writes(url)
    wrote = {
        "enqueue": versions(per_job(before, enqueued, n)),
        "drain": versions(per_job(analyzed, drained, n)),
    }
    rate = n / drain_s
    via = over(transport)
    bench.samples.add(
        Line("W1", f"enqueue {n:,} (batches of {ENQUEUE_CHUNK:,}){via}", "jobs/s", True),
        name,
        n / enqueue_s,
    )
    bench.samples.add(Line("W1", f"drain c={concurrency}{via}", "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W1", f"server CPU per job c={concurrency}{via}", "µs", False),
        name,
        server_cpu["us_per_job"],
    )
    if transport == "unix":  # the same writes either way: one set of lines
        for what, figures in (
            ("enqueue", wrote["enqueue"]),
            (f"drain c={concurrency}", wrote["drain"]),
        ):
            if what == "enqueue" and concurrency != bench.plan.concurrencies[0]:
                continue  # the enqueue is the same at every concurrency
            for key, label, unit in WRITE_LINES:
                bench.samples.add(
                    Line("W1", f"{what}: {label} per job", unit, False), name, figures[key]
                )
    bench.record(
        {
            "workload": "W1",
            "system": name,
            "concurrency": concurrency,
            "transport": transport,
            "run": run,
            "jobs": n,
            "enqueue_s": enqueue_s,
            "drain_s": drain_s,
            "startup_s": stamps["first_start"] - stamps["process_start"],
            "settle_s": stamps["done"] - stamps["last_start"],
            "server_cpu": server_cpu,
            "writes_per_job": wrote,
        }
    )
    log(
        f"W1 {name} c={concurrency}{via}: enqueue {n / enqueue_s:,.0f}/s, drain {rate:,.0f} jobs/s, "
        f"server CPU {server_cpu['us_per_job']:.0f} µs/job; a job's drain wrote "
        f"{wrote['drain']['versions']:.2f} row versions ({wrote['drain']['hot_updated']:.2f} HOT), "
        f"{wrote['drain']['wal_bytes']:.0f} WAL bytes"
    )
