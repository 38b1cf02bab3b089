"""W10 rate (Taskboard only): RATE_JOBS no-op jobs drained by one worker process at
RATE_CONCURRENCY on a queue with `set_rate_limit(queue, RATE_STARTS, RATE_PER)` (about
RATE_JOBS / RATE_STARTS windows of work), and the same jobs on a queue without a rate
limit (the control), each in a fresh database, in turn within a run.

Reported for each: starts/s (RATE_JOBS over the drain, first handler start to last
finish, as W1 measures jobs/s) against the limit, server CPU a job, the claim's cost in
the database from pg_stat_user_functions as W9 reads it (mean ms a call), and the most
starts the jobs' own stamps (started_at, the claim's clock) put in any window of
RATE_PER. After each drain every job must have succeeded at its first attempt and, under
the limit, no window of RATE_PER may hold more than RATE_STARTS starts; RuntimeError
otherwise."""

from __future__ import annotations

import bisect
import datetime as dt
import time
from typing import Any

from measure import ENQUEUE_CHUNK, OURS, Bench, analyze, checkpoint, chunks, log
from report import Line
from systems import SYSTEMS

from workloads.w9_keys import STATS_TIMEOUT_S, function_stats

RATE_JOBS = 5_000  # about ten windows of work under the limit, whatever the plan's N
RATE_STARTS = 500
RATE_PER = dt.timedelta(seconds=1)
RATE_CONCURRENCY = 32
QUEUE = "default"
# (label, whether the queue has the rate limit): the limited queue and its control.
CASES = (
    (f"rate limit {RATE_STARTS}/s", True),
    ("no rate limit (control)", False),
)
MICROSECOND = dt.timedelta(microseconds=1)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


async def rate(bench: Bench, run: int) -> None:
    """W10: the limited queue and the control, in an order that alternates from run to run."""
    cases = CASES if run % 2 == 0 else CASES[::-1]
    figures = {label: await drain(bench, label, limited, run) for label, limited in cases}
    (limited, ours), (_, control) = ((label, figures[label]) for label, _ in CASES)
    log(
        f"W10 run {run + 1}: {limited}: {ours['rate']:,.0f} starts/s "
        f"({ours['rate'] / RATE_STARTS:.0%} of the limit), most in one window "
        f"{ours['peak']:,}; the control {control['rate']:,.0f} jobs/s; claim "
        f"x{ours['claim_ms'] / control['claim_ms']:.2f} the control's a call"
    )


def most_in_a_window(stamps_us: list[int], per_us: int) -> int:
    """The most starts in any window of `per_us` (after a start's time - per, up to it),
    from the starts' times in microseconds, sorted: the window a claim counts."""
    return max(
        (
            bisect.bisect_right(stamps_us, t) - bisect.bisect_right(stamps_us, t - per_us)
            for t in stamps_us
        ),
        default=0,
    )


async def starts_held(url: str) -> dict[str, Any]:
    """What the jobs' own stamps say after the drain: how many succeeded at their first
    attempt (a reclaim would rewrite started_at), and the most starts in any window of
    RATE_PER on the claim's clock."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        rows = await (
            await conn.execute(
                "SELECT started_at, state = 'succeeded' AND attempt = 1 FROM taskboard.jobs"
                " ORDER BY started_at"
            )
        ).fetchall()
    stamps = [(at - EPOCH) // MICROSECOND for at, _ in rows if at is not None]
    return {
        "succeeded_first_attempt": sum(1 for _, ok in rows if ok),
        "most_in_a_window": most_in_a_window(stamps, RATE_PER // MICROSECOND),
        "starts_span_s": (stamps[-1] - stamps[0]) / 1e6 if stamps else 0.0,
    }


async def drain(bench: Bench, label: str, limited: bool, run: int) -> dict[str, float]:
    import psycopg
    from psycopg import sql

    n = RATE_JOBS
    url = bench.fresh(OURS, "w10")  # the database w10_taskboard
    with psycopg.connect(bench.server.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET track_functions = 'pl'").format(
                sql.Identifier(f"w10_{OURS}")
            )
        )
    if limited:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(
                "SELECT taskboard.set_rate_limit(%s, %s, %s)", (QUEUE, RATE_STARTS, RATE_PER)
            )
    enqueue_s = await SYSTEMS[OURS].enqueue_batches(url, chunks(n, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    out = bench.work / f"rate-{'limit' if limited else 'control'}-{run}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(OURS, url, RATE_CONCURRENCY, n, out)
    stats = await function_stats(url, time.monotonic() + STATS_TIMEOUT_S)
    held = await starts_held(url)
    if held["succeeded_first_attempt"] != n:
        raise RuntimeError(
            f"W10 {label}: {held['succeeded_first_attempt']:,} of {n:,} jobs succeeded at "
            "their first attempt"
        )
    if limited and held["most_in_a_window"] > RATE_STARTS:
        raise RuntimeError(
            f"W10 {label}: THE RATE LIMIT DID NOT HOLD: {held['most_in_a_window']:,} starts "
            f"in one window of {RATE_PER.total_seconds():g} s"
        )
    claim = stats.get("claim")
    if not claim or not claim["calls"]:
        raise RuntimeError(f"W10 {label}: no claim in pg_stat_user_functions")
    starts_s = n / drain_s
    claim_ms = claim["total_ms"] / claim["calls"]
    what = f"c={RATE_CONCURRENCY}, {n:,} jobs, {label}"
    bench.samples.add(Line("W10", f"drain {what}", "starts/s", True), OURS, starts_s)
    bench.samples.add(
        Line("W10", f"server CPU per job {what}", "µs", False), OURS, server_cpu["us_per_job"]
    )
    bench.samples.add(Line("W10", f"claim a call, {label}", "ms", False), OURS, claim_ms)
    bench.samples.add(
        Line("W10", f"most starts in {RATE_PER.total_seconds():g} s, {label}", "starts", False),
        OURS,
        held["most_in_a_window"],
    )
    bench.record(
        {
            "workload": "W10",
            "case": label,
            "rate_starts": RATE_STARTS if limited else None,
            "rate_per_s": RATE_PER.total_seconds() if limited else None,
            "concurrency": RATE_CONCURRENCY,
            "run": run,
            "jobs": n,
            "enqueue_s": enqueue_s,
            "drain_s": drain_s,
            "startup_s": stamps["first_start"] - stamps["process_start"],
            "server_cpu": server_cpu,
            "functions": stats,
            "jobs_a_claim": n / claim["calls"],
            "starts": held,
        }
    )
    log(
        f"W10 {label}: drain {starts_s:,.0f} starts/s, server CPU "
        f"{server_cpu['us_per_job']:.0f} µs/job, claim {claim_ms:.3f} ms a call "
        f"({claim['calls']:,} calls, {n / claim['calls']:.1f} jobs a call); most starts in "
        f"one window of {RATE_PER.total_seconds():g} s: {held['most_in_a_window']:,}"
    )
    return {"rate": starts_s, "claim_ms": claim_ms, "peak": held["most_in_a_window"]}
