"""W9 keys (Taskboard only): KEYS concurrency keys, the plan's N jobs spread evenly over
them and enqueued in key runs (a key's jobs adjacent in claim order: the head-of-line
case), drained by one worker process at KEYS_CONCURRENCY on a queue with
`set_key_limit(queue, KEY_LIMIT)`, and the same jobs on a queue without a key limit (the
control), each in a fresh database, in turn within a run.

Reported for each: jobs/s and server CPU a job as W1 measures them, and the claim's cost
in the database from pg_stat_user_functions (`track_functions = 'pl'` on the W9
databases only): taskboard.claim's mean ms a call (functions it calls included) and its
µs a job (its whole time over N). After each drain the jobs' own stamps must show the
limit held: every job succeeded at its first attempt, and no job of a key started before
the key's previous job finished; RuntimeError otherwise."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from measure import ENQUEUE_CHUNK, OURS, Bench, analyze, checkpoint, chunks, log
from report import Line

KEYS = 1_000
KEY_LIMIT = 1  # limit_held's check of the stamps is for a limit of 1
KEYS_CONCURRENCY = 32
QUEUE = "default"
TASK = "noop"  # systems.Taskboard's task
# The worker's connections report their function statistics as they close: waited for at
# most STATS_TIMEOUT_S, read every STATS_SETTLE_S until two readings agree.
STATS_TIMEOUT_S = 30.0
STATS_SETTLE_S = 0.1
# (label, key limit): the limited queue and its control, the same jobs on each.
CASES = ((f"key limit {KEY_LIMIT}", KEY_LIMIT), ("no key limit (control)", None))


def key_of(seq: int, per_key: int) -> str:
    """Key runs: seq 0 .. per_key - 1 are key 0's, and so on."""
    return f"key-{seq // per_key}"


async def enqueue(url: str, n: int, per_key: int) -> float:
    """The n jobs by enqueue_many, ENQUEUE_CHUNK a call, each with its key; seconds taken."""
    import psycopg
    from psycopg.types.json import Jsonb

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        for seqs in chunks(n, ENQUEUE_CHUNK):
            await conn.execute(
                "SELECT count(*) FROM taskboard.enqueue_many(task => %s, payloads => %s::jsonb[],"
                " queue => %s, concurrency_keys => %s::text[])",
                (
                    TASK,
                    [Jsonb({"seq": s}) for s in seqs],
                    QUEUE,
                    [key_of(s, per_key) for s in seqs],
                ),
            )
        return time.perf_counter() - started


async def function_stats(
    url: str, worker_gone_by: float, names: tuple[str, ...] = ("claim", "complete_many")
) -> dict[str, dict[str, float]]:
    """calls, total_ms and self_ms of the taskboard functions `names` in `url`'s database, read once
    no other client backend is connected to it and two readings STATS_SETTLE_S apart agree
    (a backend reports its statistics as it exits, right after it leaves
    pg_stat_activity)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while True:
            row = await (
                await conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                )
            ).fetchone()
            if row is not None and row[0] == 0:
                break
            if time.monotonic() > worker_gone_by:
                raise RuntimeError("W9: the worker's connections did not close in time")
            await asyncio.sleep(STATS_SETTLE_S)
        last: dict[str, dict[str, float]] | None = None
        while True:
            rows = await (
                await conn.execute(
                    "SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions"
                    " WHERE schemaname = 'taskboard' AND funcname = ANY (%s)",
                    (list(names),),
                )
            ).fetchall()
            stats = {
                name: {"calls": calls, "total_ms": total, "self_ms": own}
                for name, calls, total, own in rows
            }
            if stats == last:
                return stats
            if time.monotonic() > worker_gone_by:
                raise RuntimeError("W9: the function statistics did not settle in time")
            last = stats
            await asyncio.sleep(STATS_SETTLE_S)


async def limit_held(url: str) -> dict[str, Any]:
    """What the jobs' own stamps say after the drain: how many succeeded at their first
    attempt (a reclaim would rewrite started_at), and `overlaps`, the jobs that started
    before the previous job of their key (in start order) finished: 0 under a key limit of
    1. The one control connection sends every claim and completion in turn, so a job
    claimed after another's completion has the later stamp."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                """
                SELECT count(*) FILTER (WHERE state = 'succeeded' AND attempt = 1),
                       count(*) FILTER (WHERE before_finished > started_at),
                       count(DISTINCT concurrency_key)
                  FROM (SELECT j.state, j.attempt, j.started_at, j.concurrency_key,
                               lag(j.finished_at) OVER (
                                   PARTITION BY j.concurrency_key
                                   ORDER BY j.started_at, j.id) AS before_finished
                          FROM taskboard.jobs AS j) AS s
                """
            )
        ).fetchone()
    assert row is not None
    succeeded, overlaps, keys = row
    return {"succeeded_first_attempt": succeeded, "overlaps": overlaps, "keys": keys}


async def keys(bench: Bench, run: int) -> None:
    """W9: the limited queue and the control, in an order that alternates from run to run."""
    cases = CASES if run % 2 == 0 else CASES[::-1]
    figures = {label: await drain(bench, label, limit, run) for label, limit in cases}
    (limited, ours), (_, control) = ((label, figures[label]) for label, _ in CASES)
    log(
        f"W9 run {run + 1}: {limited} x{ours['rate'] / control['rate']:.2f} the control's "
        f"jobs/s, claim x{ours['claim_us_a_job'] / control['claim_us_a_job']:.2f} "
        "the control's a job"
    )


async def drain(bench: Bench, label: str, limit: int | None, run: int) -> dict[str, float]:
    import psycopg
    from psycopg import sql

    n = bench.plan.jobs
    per_key = max(1, -(-n // KEYS))
    keys_used = -(-n // per_key)  # KEYS, or fewer when N is below it
    url = bench.fresh(OURS, "w9")  # the database w9_taskboard
    with psycopg.connect(bench.server.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET track_functions = 'pl'").format(
                sql.Identifier(f"w9_{OURS}")
            )
        )
    if limit is not None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute("SELECT taskboard.set_key_limit(%s, %s)", (QUEUE, limit))
    enqueue_s = await enqueue(url, n, per_key)
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    out = bench.work / f"keys-{'limit' if limit else 'control'}-{run}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(OURS, url, KEYS_CONCURRENCY, n, out)
    stats = await function_stats(url, time.monotonic() + STATS_TIMEOUT_S)
    held = await limit_held(url)
    if held["succeeded_first_attempt"] != n:
        raise RuntimeError(
            f"W9 {label}: {held['succeeded_first_attempt']:,} of {n:,} jobs succeeded at their "
            "first attempt"
        )
    if held["keys"] != keys_used:
        raise RuntimeError(f"W9 {label}: {held['keys']:,} keys, {keys_used:,} enqueued")
    if limit is not None and held["overlaps"] != 0:
        raise RuntimeError(
            f"W9 {label}: THE KEY LIMIT DID NOT HOLD: {held['overlaps']:,} jobs started before "
            "the previous job of their key finished"
        )
    claim = stats.get("claim")
    if not claim or not claim["calls"]:
        raise RuntimeError(f"W9 {label}: no claim in pg_stat_user_functions")
    rate = n / drain_s
    claim_ms = claim["total_ms"] / claim["calls"]
    claim_us_a_job = claim["total_ms"] * 1000 / n
    what = f"c={KEYS_CONCURRENCY}, {keys_used:,} keys of {per_key} jobs in key runs, {label}"
    bench.samples.add(Line("W9", f"drain {what}", "jobs/s", True), OURS, rate)
    bench.samples.add(
        Line("W9", f"server CPU per job {what}", "µs", False), OURS, server_cpu["us_per_job"]
    )
    bench.samples.add(Line("W9", f"claim a call, {label}", "ms", False), OURS, claim_ms)
    bench.samples.add(Line("W9", f"claim per job, {label}", "µs", False), OURS, claim_us_a_job)
    bench.record(
        {
            "workload": "W9",
            "case": label,
            "key_limit": limit,
            "keys": keys_used,
            "jobs_a_key": per_key,
            "concurrency": KEYS_CONCURRENCY,
            "run": run,
            "jobs": n,
            "enqueue_s": enqueue_s,
            "drain_s": drain_s,
            "startup_s": stamps["first_start"] - stamps["process_start"],
            "server_cpu": server_cpu,
            "functions": stats,
            "jobs_a_claim": n / claim["calls"],
            "limit_held": held,
        }
    )
    log(
        f"W9 {label}: drain {rate:,.0f} jobs/s, server CPU {server_cpu['us_per_job']:.0f} µs/job, "
        f"claim {claim_ms:.3f} ms a call ({claim['calls']:,} calls, {n / claim['calls']:.1f} "
        f"jobs a call), {claim_us_a_job:.1f} µs a job; jobs started before their key's previous "
        f"job finished: {held['overlaps']:,}"
    )
    return {"rate": rate, "claim_us_a_job": claim_us_a_job}
