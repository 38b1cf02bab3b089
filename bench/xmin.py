"""Held xmin: steady churn while one transaction holds the server's xmin horizon back.

    bench/.venv/bin/python bench/xmin.py URL [--baseline S] [--hold S] [--after S]

A producer keeps a backlog of queued no-op jobs, `consumers` connections (set up as
a control connection is, their claim cursor kept) loop
`claim(batch => 32)` + `complete_many` as fast as they go (the two calls a
worker's control connection sends, as W3's churn does), and an operator's cron
prunes finished jobs older than 10 s every `sample_s`. After `baseline_s` a
connection opens a REPEATABLE READ transaction, reads one row (its snapshot is
then held: no row version deleted or replaced after it can be removed, by
VACUUM, by pruning of a page, or from an index) and keeps it open for `hold_s`;
then it commits, and the churn goes on for `after_s`.

Every `sample_s` the run records the jobs done in that window, the cycle's
p50 and p99, `n_live_tup`, `n_dead_tup`, the table's heap and total size, and
the server's oldest xmin age. The summary: throughput before, during (over the
whole hold, and its last window) and after the hold, each as jobs/s, and how
long after the release the first window ran at 90 % or more of the baseline's
jobs/s with its cycle p50 at most 1.2 times the baseline's: back to baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from w3 import (  # noqa: E402
    CHURN_BATCH,
    CHURN_CHUNK,
    LEASE_S,
    PRUNE,
    PRUNE_AGE,
    PRUNE_BATCH,
    QUEUE,
    TABLE_STATS,
    TASK,
    quantile,
)

WORKER = "bench-xmin"
# A window is back to baseline at this share of the baseline's jobs/s, its cycle p50 at
# most this many times the baseline's.
BACK_RATE = 0.9
BACK_P50 = 1.2
HORIZON = "SELECT coalesce(max(age(backend_xmin)), 0) FROM pg_catalog.pg_stat_activity"


async def held_xmin(
    url: str,
    *,
    baseline_s: float,
    hold_s: float,
    after_s: float,
    backlog: int = 20_000,
    consumers: int = 4,
    sample_s: float = 5.0,
) -> dict[str, Any]:
    """Run the churn, hold the xmin in its middle; the time series and a summary."""
    import psycopg

    from taskboard.sql import parameters, producer_async
    from taskboard.sql import worker as sql_worker
    from taskboard.worker.control import CONTROL_LOCK_TIMEOUT_SECONDS

    t0 = time.perf_counter()
    enqueued = done = 0
    cycles: list[tuple[float, float, int]] = []  # (seconds since t0, ms, jobs) per cycle
    consumers_up = asyncio.Event()
    finished = asyncio.Event()
    phase = {"name": "baseline", "held_at": None, "released_at": None}

    async def producer() -> None:
        nonlocal enqueued
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await consumers_up.wait()
            while not finished.is_set():
                if enqueued - done >= backlog:
                    await asyncio.sleep(0.005)
                    continue
                params = parameters.enqueue_many_params(
                    TASK,
                    [{"seq": s} for s in range(enqueued, enqueued + CHURN_CHUNK)],
                    QUEUE,
                    None,
                    0,
                    5,
                    None,
                )
                await producer_async.aenqueue_many(conn, params)
                enqueued += CHURN_CHUNK

    up = 0

    async def consumer(k: int) -> None:
        nonlocal done, up
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            # Set up as a worker's control connection is: its claim cursor kept.
            await sql_worker.prepare_claimer(conn, CONTROL_LOCK_TIMEOUT_SECONDS)
            await sql_worker.claim(conn, QUEUE, f"{WORKER}-{k}", CHURN_BATCH, LEASE_S)
            up += 1
            if up == consumers:
                consumers_up.set()
            while not finished.is_set():
                started = time.perf_counter()
                got = await sql_worker.claim(conn, QUEUE, f"{WORKER}-{k}", CHURN_BATCH, LEASE_S)
                if not got:
                    await asyncio.sleep(0.002)
                    continue
                answers = await sql_worker.complete_many(
                    conn, [c.job_id for c in got], [c.token for c in got], [None] * len(got)
                )
                now = time.perf_counter()
                if not all(ok for _, ok in answers):
                    raise RuntimeError("complete_many refused a job this consumer held")
                cycles.append((now - t0, (now - started) * 1000, len(got)))
                done += len(got)

    async def operator_cron() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while not finished.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), timeout=sample_s)
                    return
                while True:
                    row = await (await conn.execute(PRUNE, [PRUNE_AGE, PRUNE_BATCH])).fetchone()
                    if row is None or int(row[0]) < PRUNE_BATCH:
                        break

    async def holder() -> None:
        await consumers_up.wait()
        await asyncio.sleep(baseline_s)
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            await conn.execute("SELECT count(*) FROM taskboard.queues")
            phase.update(name="hold", held_at=time.perf_counter() - t0)
            await asyncio.sleep(hold_s)
            await conn.commit()
        phase.update(name="after", released_at=time.perf_counter() - t0)
        await asyncio.sleep(after_s)
        finished.set()

    series: list[dict[str, Any]] = []

    async def monitor() -> None:
        seen = 0
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await consumers_up.wait()
            last = time.perf_counter() - t0
            while True:
                stop = finished.is_set()
                live, dead, _, _, heap, total = await (await conn.execute(TABLE_STATS)).fetchone()
                (horizon,) = await (await conn.execute(HORIZON)).fetchone()
                now = time.perf_counter() - t0
                window = cycles[seen:]
                seen = len(cycles)
                ms = [c[1] for c in window]
                series.append(
                    {
                        "t_s": round(now, 2),
                        "phase": phase["name"],
                        "jobs_per_s": round(sum(c[2] for c in window) / (now - last), 1),
                        "cycle_p50_ms": round(statistics.median(ms), 3) if ms else None,
                        "cycle_p99_ms": round(quantile(ms, 0.99), 3) if ms else None,
                        "n_live_tup": live,
                        "n_dead_tup": dead,
                        "heap_bytes": heap,
                        "total_bytes": total,
                        "xmin_age": int(horizon),
                    }
                )
                last = now
                if stop:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), timeout=sample_s)

    tasks = [
        asyncio.create_task(producer()),
        *(asyncio.create_task(consumer(k)) for k in range(consumers)),
        asyncio.create_task(operator_cron()),
        asyncio.create_task(holder()),
        asyncio.create_task(monitor()),
    ]
    try:
        await asyncio.gather(*tasks)
    finally:
        finished.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"series": series, "summary": summarize(series, cycles, phase)}


def summarize(
    series: list[dict[str, Any]], cycles: list[tuple[float, float, int]], phase: dict[str, Any]
) -> dict[str, Any]:
    """Throughput and cycle p50 a phase, and the seconds from the release back to baseline."""
    held, released = phase["held_at"], phase["released_at"]

    def rate(start: float, end: float) -> float:
        jobs = sum(n for t, _, n in cycles if start <= t < end)
        return jobs / (end - start) if end > start else 0.0

    def p50(start: float, end: float) -> float | None:
        ms = [m for t, m, _ in cycles if start <= t < end]
        return statistics.median(ms) if ms else None

    first = cycles[0][0] if cycles else 0.0
    last = cycles[-1][0] if cycles else 0.0
    base_rate, base_p50 = rate(first, held), p50(first, held)
    back_s = None
    for point in series:
        if point["phase"] != "after" or point["t_s"] <= released:
            continue
        ok_rate = point["jobs_per_s"] >= BACK_RATE * base_rate
        ok_p50 = (
            point["cycle_p50_ms"] is not None
            and base_p50 is not None
            and point["cycle_p50_ms"] <= BACK_P50 * base_p50
        )
        if ok_rate and ok_p50:
            back_s = point["t_s"] - released
            break
    during = [p for p in series if p["phase"] == "hold"]
    return {
        "baseline_jobs_per_s": round(base_rate, 1),
        "baseline_cycle_p50_ms": base_p50,
        "hold_jobs_per_s": round(rate(held, released), 1),
        "hold_last_window_jobs_per_s": during[-1]["jobs_per_s"] if during else None,
        "hold_cycle_p50_ms": p50(held, released),
        "after_jobs_per_s": round(rate(released, last), 1),
        "back_to_baseline_s": None if back_s is None else round(back_s, 1),
        "most_dead_tup": max((p["n_dead_tup"] for p in series), default=0),
        "peak_total_bytes": max((p["total_bytes"] for p in series), default=0),
        "end_total_bytes": series[-1]["total_bytes"] if series else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="a Taskboard database, deployed")
    parser.add_argument("--baseline", type=float, default=60.0, help="seconds before the hold")
    parser.add_argument("--hold", type=float, default=600.0, help="seconds the xmin is held")
    parser.add_argument("--after", type=float, default=120.0, help="seconds after the release")
    args = parser.parse_args()
    got = asyncio.run(
        held_xmin(args.url, baseline_s=args.baseline, hold_s=args.hold, after_s=args.after)
    )
    print(json.dumps(got["summary"], indent=1))


if __name__ == "__main__":
    main()
