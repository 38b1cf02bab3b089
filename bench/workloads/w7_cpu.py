"""W7 CPU-bound (Taskboard only): cpu_jobs queued jobs, each burning CPU_WORK_MS of CPU in a
sync handler (bench/cpuapp.py), drained by `taskboard worker --processes P` for each P of
CPU_PROCESSES at CPU_CONCURRENCY handlers in all; jobs/s from the first handler start to
the queue empty."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from measure import ENQUEUE_CHUNK, HERE, OURS, Bench, analyze, checkpoint, chunks, log
from report import Line

# W7, CPU-bound: each sync handler burns CPU_WORK_MS of CPU; the same CPU_CONCURRENCY
# handlers in all, in each number of processes of CPU_PROCESSES (`taskboard worker --processes`).
CPU_WORK_MS = 5
CPU_CONCURRENCY = 4
CPU_PROCESSES = (1, 2)
CPU_TASK = "w7-burn"  # bench/cpuapp.py's task


async def cpu_bound(bench: Bench, processes: int, run: int) -> None:
    """W7: cpu_jobs queued jobs, each burning CPU_WORK_MS of CPU in a sync handler,
    drained by `taskboard worker --processes` with CPU_CONCURRENCY handlers in all."""
    import psycopg

    from taskboard.sql import parameters, producer_async

    name = OURS
    n = bench.plan.cpu_jobs
    url = bench.fresh(name, "w7")
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for seqs in chunks(n, ENQUEUE_CHUNK):
            params = parameters.enqueue_many_params(
                CPU_TASK, [{"ms": CPU_WORK_MS} for _ in seqs], "default", None, 0, 5, None
            )
            await producer_async.aenqueue_many(conn, params)
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    each = CPU_CONCURRENCY // processes
    stamps = bench.work / f"cpu-{processes}-{run}"
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
    done = await bench.emptied(name, url, [proc], timeout=max(300.0, n / 20))
    proc.terminate()
    code = await asyncio.wait_for(proc.wait(), 60)
    if code != 0:
        raise RuntimeError(f"W7 taskboard worker --processes {processes} exited with {code}")
    starts = [float(path.read_text()) for path in stamps.iterdir()]
    drain_s = done - min(starts)
    rate = n / drain_s
    config = f"{n:,} jobs of {CPU_WORK_MS} ms CPU (sync), --processes {processes} of c={each}"
    bench.samples.add(Line("W7", config, "jobs/s", True), name, rate)
    bench.record(
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
