"""W3 scale (Taskboard only, once a bench, after the runs): claim+complete latency with the
table grown to each of w3_sizes finished jobs, the dashboard's pages on it, then a churn
run of w3_churn jobs through the API with default autovacuum (bench/w3.py says how)."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import statistics
import time

from measure import OURS, Bench, checkpoint, log
from report import Line

from taskboard_dev.server import drop_database

W3_SETTLE_S = 2.0  # quiet time after growing W3's table, before sampling it


async def scale(bench: Bench) -> None:
    """W3, once a bench: claim+complete as one table grows, then the churn run."""
    import w3

    plan = bench.plan
    url = bench.fresh(OURS, "w3")
    origin = dt.datetime.now(dt.UTC) - w3.SPREAD
    step = w3.SPREAD / max(plan.w3_sizes)
    for rows in sorted(plan.w3_sizes):
        label = w3.human(rows)
        log(
            f"W3 growing taskboard.jobs to {rows:,} finished jobs (INSERT ... SELECT generate_series)"
        )
        grown = await asyncio.to_thread(w3.grow, url, rows, origin, step)
        started = time.perf_counter()
        checkpoint(bench.server)
        grown["checkpoint_s"] = time.perf_counter() - started
        # Growing writes gigabytes the kernel may still be writing back:
        # let that finish, so the sample times the table, not the disk
        # catching up with the growth step.
        started = time.perf_counter()
        os.sync()
        await asyncio.sleep(W3_SETTLE_S)
        grown["settle_s"] = time.perf_counter() - started
        started = time.perf_counter()
        got = await w3.sample(url, plan.w3_cycles, plan.w3_blocks)
        sample_s = time.perf_counter() - started
        medians = [statistics.median(b) for b in got["blocks"]]
        line = Line("W3", f"claim+complete, {label} finished", "ms", False)
        for value in medians:
            bench.samples.add(line, OURS, value)
        bench.record(
            {
                "workload": "W3",
                "part": "scale",
                **grown,
                "sample_s": sample_s,
                "cycles": plan.w3_cycles,
                "block_p50_ms": medians,
                "block_p99_ms": [w3.quantile(b, 0.99) for b in got["blocks"]],
            }
        )
        log(
            f"W3 {label}: grew {grown['inserted']:,} rows in {grown['insert_s']:.1f} s "
            f"+ VACUUM ANALYZE {grown['vacuum_analyze_s']:.1f} s + CHECKPOINT "
            f"{grown['checkpoint_s']:.1f} s; table {grown['heap_bytes'] / 2**20:,.0f} MB "
            f"+ indexes {grown['index_bytes'] / 2**20:,.0f} MB; claim+complete p50 "
            f"{', '.join(f'{v:.3f}' for v in medians)} ms ({sample_s:.1f} s)"
        )
        await dashboard_pages(bench, url, rows)
    drop_database(bench.server.url(), f"w3_{OURS}")
    await dashboard_busy(bench, max(plan.w3_sizes))
    if plan.w3_churn <= 0:
        return
    for prune_by in ("cron", "workers"):
        await w3_churn(bench, plan.w3_churn, prune_by)


async def dashboard_busy(bench: Bench, rows: int) -> None:
    """W3's dashboard on a busy table: a tenth of `rows` finished within the last hour."""
    import dashboard
    import w3

    capped = min(rows, 1_000_000)
    url = bench.fresh(OURS, "w3dash")
    log(f"W3 dashboard: {capped:,} finished jobs, a tenth of them within the last hour")
    await asyncio.to_thread(dashboard.grow_busy, url, capped)
    checkpoint(bench.server)
    await dashboard_pages(bench, url, capped, f"{w3.human(capped)} finished, busy hour")
    drop_database(bench.server.url(), f"w3dash_{OURS}")


async def dashboard_pages(bench: Bench, url: str, rows: int, label: str | None = None) -> None:
    """W3's dashboard: each page's fetch time on the table as grown (bench/dashboard.py)."""
    import dashboard
    import w3

    label = label or f"{w3.human(rows)} finished"
    got = await asyncio.to_thread(dashboard.measure, url, max(1, rows // 2))
    for page, times in got.items():
        line = Line("W3", f"dashboard {page}, {label}", "ms", False)
        for value in times:
            bench.samples.add(line, OURS, value)
    bench.record(
        {
            "workload": "W3",
            "part": "dashboard",
            "rows": rows,
            "table": label,
            "pages_ms": {
                page: {
                    "p50": statistics.median(times),
                    "p95": w3.quantile(times, 0.95),
                    "max": max(times),
                }
                for page, times in got.items()
            },
        }
    )
    log(
        f"W3 {label} dashboard p50: "
        + ", ".join(f"{page} {statistics.median(t):.1f} ms" for page, t in got.items())
    )


async def w3_churn(bench: Bench, n: int, prune_by: str) -> None:
    """One churn run; prune_by "workers" is the retention setting's way."""
    import w3

    plan = bench.plan
    url = bench.fresh(OURS, "w3churn")
    who = "an operator's cron" if prune_by == "cron" else "each consumer between cycles"
    log(
        f"W3 churn: {n:,} jobs through the API, at most {plan.w3_backlog:,} queued, "
        f"{plan.w3_consumers} connections of claim({w3.CHURN_BATCH}) + complete_many, "
        f"prune by {who} every {plan.w3_sample_s:g} s"
    )
    started = time.perf_counter()
    got = await w3.churn(
        url,
        n,
        backlog=plan.w3_backlog,
        consumers=plan.w3_consumers,
        sample_s=plan.w3_sample_s,
        prune_by=prune_by,
    )
    wall = time.perf_counter() - started
    s = got["summary"]
    # A cycle: one claim(batch => CHURN_BATCH) and the complete_many of what it got.
    churn = f"churn {w3.human(n)}"
    if prune_by == "cron":
        lines = [
            (f"{churn}, throughput", "jobs/s", True, s["jobs_per_s"]),
            (f"{churn}, cycle p50, first 10%", "ms", False, s["p50_first_tenth_ms"]),
            (f"{churn}, cycle p50, last 10%", "ms", False, s["p50_last_tenth_ms"]),
            (f"{churn}, cycle p99", "ms", False, s["p99_ms"]),
            (f"{churn}, most dead tuples", "rows", False, s["max_dead_tup"]),
            (f"{churn}, table+indexes peak", "MB", False, s["peak_total_bytes"] / 2**20),
            (f"{churn}, table+indexes end", "MB", False, s["end_total_bytes"] / 2**20),
        ]
    else:
        churn += ", workers prune"
        lines = [
            (f"{churn}, throughput", "jobs/s", True, s["jobs_per_s"]),
            (f"{churn}, cycle p50, last 10%", "ms", False, s["p50_last_tenth_ms"]),
            (f"{churn}, cycle p99", "ms", False, s["p99_ms"]),
            (f"{churn}, table+indexes end", "MB", False, s["end_total_bytes"] / 2**20),
        ]
    for config, unit, higher, value in lines:
        bench.samples.add(Line("W3", config, unit, higher), OURS, value)
    bench.record(
        {
            "workload": "W3",
            "part": "churn",
            "jobs": n,
            "backlog": plan.w3_backlog,
            "consumers": plan.w3_consumers,
            "batch": w3.CHURN_BATCH,
            "sample_s": plan.w3_sample_s,
            "prune_by": prune_by,
            "wall_s": wall,
            **s,
            "series": got["series"],
        }
    )
    log(
        f"W3 churn: {s['jobs_per_s']:,.0f} jobs/s over {s['seconds']:.0f} s; cycle p50 "
        f"{s['p50_first_tenth_ms']:.2f} ms first 10%, {s['p50_last_tenth_ms']:.2f} ms last 10%; "
        f"most dead tuples {s['max_dead_tup']:,}; {s['autovacuums']} autovacuums; "
        f"pruned {s['pruned_rows']:,} rows in {s['prune_calls']} calls"
    )
    for text in w3.series_lines(got["series"]):
        log(text)
    drop_database(bench.server.url(), f"w3churn_{OURS}")
