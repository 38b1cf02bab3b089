"""One Oban for Python worker process, started by bench/run.py for one measurement; the
twin of bench/worker.py, same arguments, same protocol, same output:

    python worker.py URL --concurrency=C --mode=drain --jobs=N --out=FILE --remaining=SQL
    python worker.py URL --concurrency=C --mode=latency --jobs=N --out=FILE
    python worker.py URL --concurrency=C --mode=share --jobs=N --out=FILE

--work-ms=MS makes each handler await MS milliseconds (W6, an API call) and
--connections=K sets the pool to K connections instead of C + 2.

drain: the N jobs are already queued. Once N handlers have started, polls Oban's own
table (the REMAINING query, every POLL_S) until no job is left unfinished, then stops.
Writes wall-clock stamps (time.time()): {process_start, first_start, last_start, done,
handlers}.

share (W5): one of several workers draining one queue, until SIGTERM; writes
{process_start, first_start, handlers}.

latency: an idle worker. Prints READY on stdout once a warm-up job (seq < 0) has run,
records the handler start of every job seq >= 0, stops once N of them have started and
writes {"starts": {seq: time}}.

Oban as configured here (bench/README.md says why): queues {"default": C} (C jobs at
once, each fetch asking for the free slots only), a pool of C + 2 connections
(Oban.create_pool, min and max), its own LISTEN connection beside it, every other
setting its default (leadership, stager, pruner with completed jobs kept a day,
lifeline, refresher).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import psycopg
from common import QUEUE, Noop, fail, pool, run
from oban import Oban

STARTED = time.time()
POLL_S = 0.005  # how often the end of a drain is checked, once every handler has started


async def run_worker(args: argparse.Namespace, stop: asyncio.Event) -> None:
    p = await pool(args.url, args.connections or args.concurrency + 2)
    try:
        async with Oban(pool=p, queues={QUEUE: args.concurrency}):
            await stop.wait()
    finally:
        await p.close()


async def drain(args: argparse.Namespace) -> dict[str, Any]:
    stop = asyncio.Event()
    all_started = asyncio.Event()
    stamps: dict[str, Any] = {"process_start": STARTED, "handlers": 0}

    def on_job(seq: int) -> None:
        now = time.time()
        if stamps["handlers"] == 0:
            stamps["first_start"] = now
        stamps["handlers"] += 1
        if stamps["handlers"] == args.jobs:
            stamps["last_start"] = now
            all_started.set()

    Noop.on_job = on_job
    async with await psycopg.AsyncConnection.connect(args.url, autocommit=True) as watcher:
        worker = asyncio.create_task(run_worker(args, stop))
        waiter = asyncio.create_task(all_started.wait())
        await asyncio.wait([worker, waiter], return_when=asyncio.FIRST_COMPLETED)
        if worker.done():
            worker.result()
            raise RuntimeError("the worker stopped before running every job")
        while True:
            row = await (await watcher.execute(args.remaining)).fetchone()
            if row is not None and row[0] == 0:
                stamps["done"] = time.time()
                break
            if worker.done():
                worker.result()
                raise RuntimeError("the worker stopped before finishing every job")
            await asyncio.sleep(POLL_S)
        stop.set()
        await worker
    return stamps


async def share(args: argparse.Namespace) -> dict[str, Any]:
    import signal

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    stamps: dict[str, Any] = {"process_start": STARTED, "handlers": 0}

    def on_job(seq: int) -> None:
        if stamps["handlers"] == 0:
            stamps["first_start"] = time.time()
        stamps["handlers"] += 1

    Noop.on_job = on_job
    await run_worker(args, stop)
    return stamps


async def latency(args: argparse.Namespace) -> dict[str, Any]:
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
        if len(starts) >= args.jobs:
            done.set()

    Noop.on_job = on_job
    worker = asyncio.create_task(run_worker(args, stop))
    waiter = asyncio.create_task(done.wait())
    await asyncio.wait([worker, waiter], return_when=asyncio.FIRST_COMPLETED)
    if worker.done():
        worker.result()
        raise RuntimeError("the worker stopped before running every job")
    await asyncio.sleep(0.2)  # let the last completions land before shutting down
    stop.set()
    await worker
    return {"starts": {str(k): v for k, v in starts.items()}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--mode", choices=("drain", "latency", "share"), required=True)
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--remaining")
    parser.add_argument("--work-ms", type=float, default=0.0)
    parser.add_argument("--connections", type=int)
    args = parser.parse_args()
    if args.mode == "drain" and not args.remaining:
        fail("drain needs --remaining=SQL")
    Noop.work_s = args.work_ms / 1000
    modes = {"drain": drain, "latency": latency, "share": share}
    result = run(modes[args.mode](args))
    args.out.write_text(json.dumps(result))


main()
