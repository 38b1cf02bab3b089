"""One worker process of one system, started by run.py for one measurement.

    python bench/worker.py SYSTEM URL --concurrency C --mode drain --jobs N --out FILE
    python bench/worker.py SYSTEM URL --concurrency C --mode latency --jobs N --out FILE
    python bench/worker.py SYSTEM URL --concurrency C --mode drain --jobs N --out FILE \
        --work-ms MS --connections K   (W6: each handler awaits MS; K connections in all)
    python bench/worker.py taskboard URL --concurrency C --mode drain --jobs N --out FILE \
        --queues Q1,default   (W10: the worker claims from each; the drain is of 'default')

drain: the N jobs are already queued. Runs the worker; once N handlers have
started, polls the system's own table (every POLL_S) until no job is left
unfinished, then stops the worker. Writes wall-clock stamps (time.time(),
shared with the parent on this host): process start, worker started, first
and last handler start, all finished.

latency: an idle worker. Prints READY on stdout once a warm-up job (seq < 0)
has run, records the handler-start time of every job seq >= 0, and stops
once N of them have started. Writes {seq: start time}.

A system whose worker runs in a runtime of its own (the Node peers, and Oban for
Python on bench/.venv312's Python 3.12: `worker_argv`) has a worker of its own
with these arguments and this protocol; run.py starts it directly,
and this script hands over to it (exec) when called for such a system.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from systems import SYSTEMS

POLL_S = 0.005  # how often the end of a drain is checked, once every handler has started
STARTED = time.time()


async def drain(
    system: Any, url: str, concurrency: int, jobs: int, remaining: str | None = None, **work: Any
) -> dict[str, Any]:
    """Run the worker until its N handlers have started and `remaining` (the system's
    REMAINING unless given) says nothing is left unfinished."""
    import psycopg

    remaining = system.REMAINING if remaining is None else remaining

    stop = asyncio.Event()
    all_started = asyncio.Event()
    stamps: dict[str, Any] = {"process_start": STARTED, "handlers": 0}

    def on_job(seq: int) -> None:
        now = time.time()
        if stamps["handlers"] == 0:
            stamps["first_start"] = now
        stamps["handlers"] += 1
        if stamps["handlers"] == jobs:
            stamps["last_start"] = now
            all_started.set()

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as watcher:
        worker = asyncio.create_task(system.run_worker(url, concurrency, on_job, stop, **work))
        waiter = asyncio.create_task(all_started.wait())
        await asyncio.wait([worker, waiter], return_when=asyncio.FIRST_COMPLETED)
        if worker.done():
            worker.result()
            raise RuntimeError("the worker stopped before running every job")
        while True:
            row = await (await watcher.execute(remaining)).fetchone()
            if row[0] == 0:
                stamps["done"] = time.time()
                break
            if worker.done():
                worker.result()
                raise RuntimeError("the worker stopped before finishing every job")
            await asyncio.sleep(POLL_S)
        stop.set()
        await worker
    return stamps


async def share(system: Any, url: str, concurrency: int) -> dict[str, Any]:
    """W5: one of several worker processes draining one queue together, until SIGTERM
    (run.py sends it once the queue is empty: one poller for all, not one each). Stamps
    its first handler start and how many handlers it ran."""
    import signal

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    stamps: dict[str, Any] = {"process_start": STARTED, "handlers": 0}

    def on_job(seq: int) -> None:
        if stamps["handlers"] == 0:
            stamps["first_start"] = time.time()
        stamps["handlers"] += 1

    await system.run_worker(url, concurrency, on_job, stop)
    return stamps


async def latency(system: Any, url: str, concurrency: int, jobs: int) -> dict[str, Any]:
    stop = asyncio.Event()
    done = asyncio.Event()
    starts: dict[int, float] = {}
    ready = False

    def on_job(seq: int) -> None:
        nonlocal ready
        now = time.time()
        if seq < 0:
            if not ready:
                ready = True
                print("READY", flush=True)
            return
        starts[seq] = now
        if len(starts) >= jobs:
            done.set()

    worker = asyncio.create_task(system.run_worker(url, concurrency, on_job, stop))
    waiter = asyncio.create_task(done.wait())
    await asyncio.wait([worker, waiter], return_when=asyncio.FIRST_COMPLETED)
    if worker.done():
        worker.result()
        raise RuntimeError("the worker stopped before running every job")
    await asyncio.sleep(0.2)  # let the last completions land before shutting down
    stop.set()
    await worker
    return {"starts": {str(k): v for k, v in starts.items()}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=sorted(SYSTEMS))
    parser.add_argument("url")
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--mode", choices=("drain", "latency", "share"), required=True)
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--work-ms", type=float, default=0.0, help="drain: each handler awaits this"
    )
    parser.add_argument(
        "--connections", type=int, help="drain: connections in all (default: concurrency + 2)"
    )
    parser.add_argument(
        "--queues",
        help="drain, taskboard only: comma-separated queues the worker claims from; the "
        "drain is of the queue 'default' (the others may hold jobs that cannot start)",
    )
    args = parser.parse_args()
    system = SYSTEMS[args.system]
    external = getattr(system, "worker_argv", None)
    if external is not None:
        argv = external(args.url, args.concurrency, args.mode, args.jobs, args.out)
        os.execv(argv[0], argv)
    if args.mode == "share":
        result = asyncio.run(share(system, args.url, args.concurrency))
    elif args.mode == "drain":
        work: dict[str, Any] = {}
        if args.work_ms:
            work["work_s"] = args.work_ms / 1000
        if args.connections is not None:
            work["connections"] = args.connections
        if args.queues:
            work["queues"] = args.queues.split(",")
            work["remaining"] = system.REMAINING_DEFAULT
        result = asyncio.run(drain(system, args.url, args.concurrency, args.jobs, **work))
    else:
        result = asyncio.run(latency(system, args.url, args.concurrency, args.jobs))
    args.out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
