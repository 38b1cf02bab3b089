"""W5 fan-out (Taskboard only): one queue drained by 1, 4 and 16 worker processes of
FANOUT_CONCURRENCY handlers in all.

The workers start on a paused queue and the drain begins when every one of them is
connected (resume wakes them by NOTIFY): 16 Python processes importing on two cores
would otherwise share them with the first ones already draining."""

from __future__ import annotations

import asyncio
import json
import time

from measure import ENQUEUE_CHUNK, OURS, Bench, analyze, checkpoint, chunks, log, over
from report import Line
from server import ServerCpu
from systems import SYSTEMS

# W5, fan-out: one queue drained by 1, 4 and 16 worker processes of FANOUT_CONCURRENCY in all.
FANOUT_PROCESSES = (1, 4, 16)
FANOUT_CONCURRENCY = 32
QUEUE = "default"
# A worker is up once its control and renewal connections are: pg_stat_activity shows
# them under application_name 'taskboard <worker name>'.
OWN_CONNECTIONS = 2
READY_TIMEOUT_S = 120.0
SETTLE_S = 0.5  # after the last connection: its first claim (of a paused queue) done


async def queue_control(url: str, call: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"SELECT taskboard.{call}(%s)", (QUEUE,))


async def workers_up(url: str, processes: int) -> None:
    """Wait until `processes` workers have their own connections open."""
    import psycopg

    deadline = time.monotonic() + READY_TIMEOUT_S
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while True:
            row = await (
                await conn.execute(
                    "SELECT count(*) FROM (SELECT application_name FROM pg_stat_activity"
                    " WHERE datname = current_database() AND application_name LIKE 'taskboard %%'"
                    " GROUP BY application_name HAVING count(*) >= %s) AS up",
                    (OWN_CONNECTIONS,),
                )
            ).fetchone()
            if row is not None and row[0] >= processes:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"W5: {processes} workers not connected in time")
            await asyncio.sleep(0.05)
    await asyncio.sleep(SETTLE_S)


async def fanout(bench: Bench, processes: int, run: int, transport: str) -> None:
    """W5: the W1 backlog drained by `processes` Taskboard workers sharing
    FANOUT_CONCURRENCY handler slots, connected over `transport`: claim conflicts and
    wake-ups as workers multiply."""
    name = OURS
    system = SYSTEMS[name]
    n = bench.plan.jobs
    url = bench.fresh(name, "w5", transport)
    await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    await queue_control(url, "pause")
    each = FANOUT_CONCURRENCY // processes
    outs = [bench.work / f"share-{processes}-{i}-{run}-{transport}.json" for i in range(processes)]
    async with ServerCpu(bench.server).sampling() as cpu:
        procs = [
            await asyncio.create_subprocess_exec(
                *bench.worker_argv(name, url, each, "share", n, out)
            )
            for out in outs
        ]
        await workers_up(url, processes)
        await queue_control(url, "resume")
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
    via = over(transport)
    config = f"{n:,} jobs, {processes} worker process(es) of c={each}{via}"
    bench.samples.add(Line("W5", config, "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W5", f"server CPU per job, {processes} process(es){via}", "µs", False),
        name,
        server_cpu["us_per_job"],
    )
    bench.record(
        {
            "workload": "W5",
            "processes": processes,
            "transport": transport,
            "run": run,
            "jobs": n,
            "drain_s": drain_s,
            "handlers": [s["handlers"] for s in stamps],
            "server_cpu": server_cpu,
        }
    )
    log(
        f"W5 {processes} x c={each}{via}: {rate:,.0f} jobs/s, "
        f"server CPU {server_cpu['us_per_job']:.0f} µs/job"
    )
