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
otherwise.

Full keys: a queue FULL_QUEUE under a rate per key of FULL_RATE_STARTS a FULL_RATE_PER,
with FULL_KEYS keys each holding a queued job and a window already full (their starts
logged as an hour of claims would have: nothing of that queue may start), and, as the
control, the same queue with no job; each beside FAST_JOBS no-op jobs of 'default'.
Reported for each: a claim of the full keys' queue at each of CLAIM_BATCHES (the median
of CLAIM_SAMPLES calls on one connection, timed around the call, each answering no row),
and the fast queue drained by one worker process at RATE_CONCURRENCY claiming from both
queues (jobs/s, and claim's mean time a call in the database over the drain). Every fast
job must succeed at its first attempt and no full key's job start; RuntimeError
otherwise."""

from __future__ import annotations

import bisect
import datetime as dt
import statistics
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
# Full keys: issue 38's red team measured one claim of such a queue at 6.8 s at batch 1
# and 572 ms at batch 32 on schema 0.5.0 (the bar run.py prints).
FULL_KEYS = 16_000
FULL_QUEUE = "metered"
FULL_RATE_STARTS = 1  # a key's starts in FULL_RATE_PER
FULL_RATE_PER = dt.timedelta(hours=1)
FAST_JOBS = 2_000
CLAIM_BATCHES = (1, 32)
CLAIM_SAMPLES = 5  # timed claims of each batch, after one untimed
RED_TEAM_CLAIM_MS = {1: 6_800.0, 32: 572.0}
FULL_CASES = (
    (f"{FULL_KEYS:,} full keys", True),
    ("no full keys (control)", False),
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
    cases_full = FULL_CASES if run % 2 == 0 else FULL_CASES[::-1]
    beside = {label: await beside_full_keys(bench, label, full, run) for label, full in cases_full}
    (full, ours), (_, control) = ((label, beside[label]) for label, _ in FULL_CASES)
    log(
        f"W10 run {run + 1}: {full}: a claim of {FULL_QUEUE} "
        + ", ".join(f"{ours[f'claim_{b}_ms']:,.1f} ms at batch {b}" for b in CLAIM_BATCHES)
        + f"; the fast queue beside it {ours['fast_rate']:,.0f} jobs/s, "
        f"x{ours['fast_rate'] / control['fast_rate']:.2f} the control's"
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


async def fill_full_keys(url: str) -> None:
    """FULL_KEYS keys of FULL_QUEUE, each with a queued job and FULL_RATE_STARTS starts a
    minute old in the log: every key's window is full for the next FULL_RATE_PER."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
            " SELECT %s, 'key-' || g, clock_timestamp() - interval '1 minute'"
            "   FROM generate_series(1, %s) AS g, generate_series(1, %s) AS s",
            (FULL_QUEUE, FULL_KEYS, FULL_RATE_STARTS),
        )
        await conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many(task => 'noop',"
            " payloads => array_fill('{}'::jsonb, ARRAY[%s]), queue => %s,"
            " concurrency_keys => (SELECT array_agg('key-' || g ORDER BY g)"
            "                        FROM generate_series(1, %s) AS g))",
            (FULL_KEYS, FULL_QUEUE, FULL_KEYS),
        )


async def claim_times(url: str) -> dict[int, float]:
    """The median ms of CLAIM_SAMPLES claims of FULL_QUEUE at each of CLAIM_BATCHES, as
    the worker role on one connection, after one untimed call; each must answer no row."""
    import psycopg

    out: dict[int, float] = {}
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("SET ROLE taskboard_worker")
        for batch in CLAIM_BATCHES:
            times = []
            for sample in range(CLAIM_SAMPLES + 1):
                started = time.perf_counter()
                rows = await (
                    await conn.execute(
                        "SELECT job_id FROM taskboard.claim(%s, 'w10-claims', %s)",
                        (FULL_QUEUE, batch),
                    )
                ).fetchall()
                took = time.perf_counter() - started
                if rows:
                    raise RuntimeError(f"W10: a claim of {FULL_QUEUE} started a full key's job")
                if sample:
                    times.append(took * 1000)
            out[batch] = statistics.median(times)
    return out


async def beside_full_keys(bench: Bench, label: str, full: bool, run: int) -> dict[str, float]:
    import psycopg
    from psycopg import sql

    url = bench.fresh(OURS, "w10")  # the database w10_taskboard
    with psycopg.connect(bench.server.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET track_functions = 'pl'").format(
                sql.Identifier(f"w10_{OURS}")
            )
        )
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            "SELECT taskboard.set_rate_limit(%s, %s, %s, by_key => true)",
            (FULL_QUEUE, FULL_RATE_STARTS, FULL_RATE_PER),
        )
    if full:
        await fill_full_keys(url)
    await SYSTEMS[OURS].enqueue_batches(url, chunks(FAST_JOBS, ENQUEUE_CHUNK))
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    claims = await claim_times(url)
    before = await function_stats(url, time.monotonic() + STATS_TIMEOUT_S)
    out = bench.work / f"rate-{'full' if full else 'empty'}-{run}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(
        OURS, url, RATE_CONCURRENCY, FAST_JOBS, out, extra=(f"--queues={FULL_QUEUE},{QUEUE}",)
    )
    after = await function_stats(url, time.monotonic() + STATS_TIMEOUT_S)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                "SELECT count(*) FILTER (WHERE queue = %s AND state = 'succeeded' AND attempt = 1),"
                "       count(*) FILTER (WHERE queue = %s AND state <> 'queued')"
                "  FROM taskboard.jobs",
                (QUEUE, FULL_QUEUE),
            )
        ).fetchone()
    assert row is not None
    succeeded, started = row
    if succeeded != FAST_JOBS:
        raise RuntimeError(
            f"W10 {label}: {succeeded:,} of {FAST_JOBS:,} fast jobs succeeded at their first attempt"
        )
    if started:
        raise RuntimeError(f"W10 {label}: THE RATE LIMIT DID NOT HOLD: {started:,} full keys' jobs")
    calls = after["claim"]["calls"] - before.get("claim", {"calls": 0})["calls"]
    if not calls:
        raise RuntimeError(f"W10 {label}: no claim in pg_stat_user_functions")
    total_ms = after["claim"]["total_ms"] - before.get("claim", {"total_ms": 0.0})["total_ms"]
    fast_rate = FAST_JOBS / drain_s
    for batch, ms in claims.items():
        bench.samples.add(
            Line("W10", f"claim of {FULL_QUEUE} at batch {batch}, {label}", "ms", False), OURS, ms
        )
    what = f"c={RATE_CONCURRENCY}, {FAST_JOBS:,} jobs beside {FULL_QUEUE}, {label}"
    bench.samples.add(Line("W10", f"drain {what}", "jobs/s", True), OURS, fast_rate)
    bench.samples.add(
        Line("W10", f"claim a call in that drain, {label}", "ms", False), OURS, total_ms / calls
    )
    bench.record(
        {
            "workload": "W10",
            "case": label,
            "full_keys": FULL_KEYS if full else 0,
            "rate_starts_per_key": FULL_RATE_STARTS,
            "rate_per_s": FULL_RATE_PER.total_seconds(),
            "claim_ms": {str(b): ms for b, ms in claims.items()},
            "concurrency": RATE_CONCURRENCY,
            "run": run,
            "fast_jobs": FAST_JOBS,
            "drain_s": drain_s,
            "startup_s": stamps["first_start"] - stamps["process_start"],
            "server_cpu": server_cpu,
            "drain_claims": {"calls": calls, "total_ms": total_ms},
        }
    )
    log(
        f"W10 {label}: a claim of {FULL_QUEUE} "
        + ", ".join(f"{ms:,.1f} ms at batch {b}" for b, ms in claims.items())
        + f"; the fast queue beside it {fast_rate:,.0f} jobs/s, claim {total_ms / calls:.3f} ms "
        f"a call ({calls:,} calls)"
    )
    out_figures = {f"claim_{b}_ms": ms for b, ms in claims.items()}
    out_figures["fast_rate"] = fast_rate
    return out_figures
