"""W8 backlog (Taskboard only, once a bench, after the runs): the dashboard's overview, job
list and /metrics on a retry backlog, backlog_jobs queued jobs each with 5 errors hours old
and big_jobs finished jobs of big_bytes each (bench/backlog.py says how). Target: the
overview and the job list within 200 ms."""

from __future__ import annotations

import asyncio
import statistics

from measure import OURS, Bench, checkpoint, log
from report import Line

from taskboard_dev.server import drop_database


async def backlog(bench: Bench) -> None:
    """W8: build the backlog in a fresh database, then time the pages on it."""
    import backlog as tables

    plan = bench.plan
    url = bench.fresh(OURS, "w8")
    log(
        f"W8 backlog: {plan.backlog_jobs:,} queued jobs with {tables.ERRORS_A_JOB} old errors "
        f"each, {plan.big_jobs} jobs of {plan.big_bytes / 2**20:.1f} MB"
    )
    took = await asyncio.to_thread(
        tables.build, url, plan.backlog_jobs, plan.big_jobs, plan.big_bytes
    )
    checkpoint(bench.server)
    got = await asyncio.to_thread(tables.measure, url)
    label = (
        f"{plan.backlog_jobs:,} retried jobs, {plan.big_jobs} of {plan.big_bytes / 2**20:.1f} MB"
    )
    for page, times in got.items():
        line = Line("W8", f"dashboard {page}, {label}", "ms", False)
        for value in times:
            bench.samples.add(line, OURS, value)
    bench.record(
        {
            "workload": "W8",
            "backlog_jobs": plan.backlog_jobs,
            "big_jobs": plan.big_jobs,
            "big_bytes": plan.big_bytes,
            **took,
            "pages_ms": {
                page: {"p50": statistics.median(times), "max": max(times)}
                for page, times in got.items()
            },
        }
    )
    log(f"W8 {label}: " + "; ".join(tables.verdicts(got)))
    drop_database(bench.server.url(), f"w8_{OURS}")
