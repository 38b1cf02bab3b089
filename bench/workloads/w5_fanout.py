"""W5 fan-out: one queue drained by 1, 4 and 16 worker processes of FANOUT_CONCURRENCY
handlers in all.

Taskboard's workers start on a paused queue and the drain begins when every one of
them is connected (resume wakes them by NOTIFY): 16 Python processes importing on two
cores would otherwise share them with the first ones already draining. A peer has no
pause: its jobs table is locked (ACCESS EXCLUSIVE, in an open transaction) while its
workers start, and the drain begins when as many of its connections as there are
processes wait for that lock (or GATE_TIMEOUT_S has passed), at its COMMIT."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from measure import ENQUEUE_CHUNK, HERE, OURS, Bench, analyze, checkpoint, chunks, log, over
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
GATE_TIMEOUT_S = 30.0  # a peer's workers waiting on its locked table, at most


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


async def fanout(
    bench: Bench, processes: int, run: int, transport: str, launcher: str = "separate"
) -> None:
    """W5: the W1 backlog drained by `processes` Taskboard workers sharing
    FANOUT_CONCURRENCY handler slots, connected over `transport`: claim conflicts and
    wake-ups as workers multiply. `launcher` "separate": that many worker.py processes,
    each a worker of its own; "processes": one `taskboard worker --processes N`."""
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
    tag = f"{launcher}-{processes}-{run}-{transport}"
    stamps_dir = bench.work / f"fleet-{tag}"
    outs = [bench.work / f"share-{tag}-{i}.json" for i in range(processes)]
    async with ServerCpu(bench.server).sampling() as cpu:
        if launcher == "separate":
            procs = [
                await asyncio.create_subprocess_exec(
                    *bench.worker_argv(name, url, each, "share", n, out)
                )
                for out in outs
            ]
        else:
            stamps_dir.mkdir()
            env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
            env.update(TASKBOARD_DATABASE_URL=url, BENCH_STAMPS=str(stamps_dir))
            procs = [
                await asyncio.create_subprocess_exec(
                    str(Path(sys.executable).with_name("taskboard")),
                    "worker",
                    "noopapp:app",
                    f"--processes={processes}",
                    f"--concurrency={each}",
                    f"--pool-size={each + 2}",
                    "--log-level=WARNING",
                    cwd=HERE,
                    env=env,
                )
            ]
        await workers_up(url, processes if launcher == "separate" else 1)  # one claimer
        await queue_control(url, "resume")
        done = await bench.emptied(name, url, procs, timeout=max(300.0, n / 50))
    for proc in procs:
        proc.terminate()
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 60)
    if any(codes):
        raise RuntimeError(f"W5 {processes} workers ({launcher}) exited with {codes}")
    if launcher == "separate":
        stamps = [json.loads(await asyncio.to_thread(out.read_text)) for out in outs]
        handlers = [s["handlers"] for s in stamps]
        first_start = min(s["first_start"] for s in stamps if s["handlers"])
    else:
        starts = [float(path.read_text()) for path in stamps_dir.iterdir()]
        handlers = [len(starts)]  # processes that ran a handler
        first_start = min(starts)
    drain_s = done - first_start
    server_cpu = cpu.between(first_start, done, n)
    rate = n / drain_s
    via = over(transport)
    how = (
        f"{processes} worker process(es) of c={each}"
        if launcher == "separate"
        else f"--processes {processes} of c={each}"
    )
    bench.samples.add(Line("W5", f"{n:,} jobs, {how}{via}", "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W5", f"server CPU per job, {how}{via}", "µs", False),
        name,
        server_cpu["us_per_job"],
    )
    bench.record(
        {
            "workload": "W5",
            "processes": processes,
            "launcher": launcher,
            "transport": transport,
            "run": run,
            "jobs": n,
            "drain_s": drain_s,
            "handlers": handlers,
            "server_cpu": server_cpu,
        }
    )
    log(f"W5 {how}{via}: {rate:,.0f} jobs/s, server CPU {server_cpu['us_per_job']:.0f} µs/job")


async def fanout_peer(bench: Bench, name: str, processes: int, run: int) -> None:
    """W5 for peer `name`, over TCP: the W1 backlog drained by `processes` of its worker
    processes sharing FANOUT_CONCURRENCY handler slots (worker.py's share mode, or the
    peer's twin of it), started behind a lock on its jobs table (see above)."""
    import psycopg

    system = SYSTEMS[name]
    n = bench.plan.jobs
    url = bench.fresh(name, "w5", "tcp")
    await system.enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    each = FANOUT_CONCURRENCY // processes
    outs = [bench.work / f"share-{name}-{processes}-{run}-{i}.json" for i in range(processes)]
    async with (
        await psycopg.AsyncConnection.connect(url) as gate,
        ServerCpu(bench.server).sampling() as cpu,
    ):
        await gate.execute(f"LOCK TABLE {system.JOBS_TABLE} IN ACCESS EXCLUSIVE MODE")
        procs = [
            await asyncio.create_subprocess_exec(
                *bench.worker_argv(name, url, each, "share", n, out)
            )
            for out in outs
        ]
        waiting = await _waiting_on_lock(url, processes)
        await gate.commit()
        done = await bench.emptied(name, url, procs, timeout=max(300.0, n / 50))
    for proc in procs:
        proc.terminate()
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 60)
    if any(codes):
        raise RuntimeError(f"W5 {processes} {name} workers exited with {codes}")
    stamps = [json.loads(await asyncio.to_thread(out.read_text)) for out in outs]
    first_start = min(s["first_start"] for s in stamps if s["handlers"])
    drain_s = done - first_start
    server_cpu = cpu.between(first_start, done, n)
    rate = n / drain_s
    how = f"{processes} worker process(es) of c={each}{over('tcp')}"
    bench.samples.add(Line("W5", f"{n:,} jobs, {how}", "jobs/s", True), name, rate)
    bench.samples.add(
        Line("W5", f"server CPU per job, {how}", "µs", False), name, server_cpu["us_per_job"]
    )
    bench.record(
        {
            "workload": "W5",
            "system": name,
            "processes": processes,
            "launcher": "separate",
            "transport": "tcp",
            "run": run,
            "jobs": n,
            "drain_s": drain_s,
            "handlers": [s["handlers"] for s in stamps],
            "waiting_at_start": waiting,
            "server_cpu": server_cpu,
        }
    )
    log(f"W5 {name} {how}: {rate:,.0f} jobs/s, server CPU {server_cpu['us_per_job']:.0f} µs/job")


async def _waiting_on_lock(url: str, processes: int) -> int:
    """Wait until `processes` connections wait for a lock (or GATE_TIMEOUT_S); how many do."""
    import psycopg

    deadline = time.monotonic() + GATE_TIMEOUT_S
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while True:
            row = await (
                await conn.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).fetchone()
            waiting = 0 if row is None else int(row[0])
            if waiting >= processes or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
    await asyncio.sleep(SETTLE_S)
    return waiting
