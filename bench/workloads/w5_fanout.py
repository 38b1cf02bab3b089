"""W5 fan-out (Taskboard only): one queue drained by 1, 4 and 16 worker processes of
FANOUT_CONCURRENCY handlers in all."""

from __future__ import annotations

import asyncio
import json

from measure import ENQUEUE_CHUNK, OURS, Bench, analyze, checkpoint, chunks, log
from report import Line
from server import ServerCpu
from systems import SYSTEMS

# W5, fan-out: one queue drained by 1, 4 and 16 worker processes of FANOUT_CONCURRENCY in all.
FANOUT_PROCESSES = (1, 4, 16)
FANOUT_CONCURRENCY = 32


async def fanout(bench: Bench, processes: int, run: int) -> None:
    """W5: the W1 backlog drained by `processes` Taskboard workers sharing
    FANOUT_CONCURRENCY handler slots: claim conflicts and wake-ups as workers multiply."""
    name = OURS
    system = SYSTEMS[name]
    n = bench.plan.jobs
    url = bench.fresh(name, "w5")
    await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    each = FANOUT_CONCURRENCY // processes
    outs = [bench.work / f"share-{processes}-{i}-{run}.json" for i in range(processes)]
    async with ServerCpu(bench.server).sampling() as cpu:
        procs = [
            await asyncio.create_subprocess_exec(
                *bench.worker_argv(name, url, each, "share", n, out)
            )
            for out in outs
        ]
        done = await bench.emptied(name, url, procs, timeout=max(300.0, n / 50))
    for proc in procs:
        proc.terminate()
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 60)
    if any(codes):
        raise RuntimeError(f"W5 {processes} workers exited with {codes}")
    stamps = [json.loads(await asyncio.to_thread(out.read_text)) for out in outs]
    ran = [s for s in stamps if s["handlers"]]
    first_start = min(s["first_start"] for s in ran)
    drain_s = done - first_start
    server_cpu = cpu.between(first_start, done, n)
    rate = n / drain_s
    config = f"{n:,} jobs, {processes} worker process(es) of c={each}"
    bench.samples.add(Line("W5", config, "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W5", f"server CPU per job, {processes} process(es)", "µs", False),
        name,
        server_cpu["us_per_job"],
    )
    bench.record(
        {
            "workload": "W5",
            "processes": processes,
            "run": run,
            "jobs": n,
            "drain_s": drain_s,
            "handlers": [s["handlers"] for s in stamps],
            "server_cpu": server_cpu,
        }
    )
    log(
        f"W5 {processes} x c={each}: {rate:,.0f} jobs/s, "
        f"server CPU {server_cpu['us_per_job']:.0f} µs/job"
    )
