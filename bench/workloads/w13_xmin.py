"""W13 held xmin (Taskboard only; once a bench): W3's churn at full speed while one
transaction holds the server's xmin horizon back for a while (bench/xmin.py), the
failure mode that takes PostgreSQL queues down in production: no row version a claim
or a completion replaces can be removed until it ends."""

from __future__ import annotations

import time

from measure import OURS, Bench, log
from report import Line


async def held(bench: Bench) -> None:
    import xmin

    plan = bench.plan
    url = bench.fresh(OURS, "w13")
    log(
        f"W13 held xmin: churn of claim({xmin.CHURN_BATCH}) + complete_many on "
        f"{plan.w3_consumers} connections, {plan.xmin_baseline_s:g} s, then the xmin held "
        f"{plan.xmin_hold_s:g} s, then {plan.xmin_after_s:g} s"
    )
    started = time.perf_counter()
    got = await xmin.held_xmin(
        url,
        baseline_s=plan.xmin_baseline_s,
        hold_s=plan.xmin_hold_s,
        after_s=plan.xmin_after_s,
        consumers=plan.w3_consumers,
        sample_s=plan.w3_sample_s,
    )
    s = got["summary"]
    hold = f"xmin held {plan.xmin_hold_s:g} s"
    lines = [
        ("baseline throughput", "jobs/s", True, s["baseline_jobs_per_s"]),
        (f"{hold}, throughput", "jobs/s", True, s["hold_jobs_per_s"]),
        (f"{hold}, its last window", "jobs/s", True, s["hold_last_window_jobs_per_s"]),
        ("baseline cycle p50", "ms", False, s["baseline_cycle_p50_ms"]),
        (f"{hold}, cycle p50", "ms", False, s["hold_cycle_p50_ms"]),
        ("after the release, throughput", "jobs/s", True, s["after_jobs_per_s"]),
        (f"{hold}, most dead tuples", "rows", False, s["most_dead_tup"]),
        (f"{hold}, table+indexes peak", "MB", False, s["peak_total_bytes"] / 2**20),
    ]
    if s["back_to_baseline_s"] is not None:
        lines.append(("back to baseline after the release", "s", False, s["back_to_baseline_s"]))
    for config, unit, higher, value in lines:
        if value is not None:
            bench.samples.add(Line("W13", config, unit, higher), OURS, value)
    bench.record({"workload": "W13", **got})
    log(
        f"W13: {s['baseline_jobs_per_s']:,.0f} jobs/s before, {s['hold_jobs_per_s']:,.0f} "
        f"while held (last window {s['hold_last_window_jobs_per_s']}), back to baseline "
        f"{s['back_to_baseline_s']} s after the release; {time.perf_counter() - started:.0f} s"
    )
