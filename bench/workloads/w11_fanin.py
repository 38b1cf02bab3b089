"""W11 fan-in (Taskboard only): FANIN_DEPENDENCIES no-op jobs and one more no-op job that
depends on all of them (`enqueue(..., depends_on => ARRAY[their ids])`), drained by one
worker process at FANIN_CONCURRENCY; beside it, the same FANIN_DEPENDENCIES + 1 jobs with
no dependency (the control), each in a fresh database, in turn within a run.

The FANIN_DEPENDENCIES jobs go in by enqueue_many, ENQUEUE_CHUNK a call (timed, as W1
times its enqueue); the last job by one enqueue, timed on its own: with its
FANIN_DEPENDENCIES dependencies it writes as many edges and marks (and locks) each
dependency. Reported for each: jobs/s and server CPU a job as W1 measures them (all
FANIN_DEPENDENCIES + 1 jobs, the last one included), claim's and complete_many's mean ms a
call from pg_stat_user_functions as W9 reads them (settle_dependents's too, which
complete_many calls for a job that has dependents), and the last job's enqueue in ms. For
the fan-in, also the delay from the last dependency's finish (finished_at) to the
dependent's start (started_at), both stamped by the database's clock.

After each drain every job must have succeeded at its first attempt; in the fan-in the
dependent must have been `waiting` after its enqueue and have started after every
dependency finished; RuntimeError otherwise."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from measure import ENQUEUE_CHUNK, OURS, Bench, analyze, checkpoint, chunks, log
from report import Line
from systems import TASK

from workloads.w9_keys import STATS_TIMEOUT_S, function_stats

FANIN_DEPENDENCIES = 10_000  # whatever the plan's N
FANIN_CONCURRENCY = 32
QUEUE = "default"
FUNCTIONS = ("claim", "complete_many", "settle_dependents", "enqueue", "enqueue_waiting")
# (label, whether the last job depends on all the others): the fan-in and its control.
CASES = (
    (f"one job waiting on {FANIN_DEPENDENCIES:,}", True),
    ("no dependency (control)", False),
)


async def fanin(bench: Bench, run: int) -> None:
    """W11: the fan-in and the control, in an order that alternates from run to run."""
    cases = CASES if run % 2 == 0 else CASES[::-1]
    figures = {label: await drain(bench, label, waits, run) for label, waits in cases}
    (waiting, ours), (_, control) = ((label, figures[label]) for label, _ in CASES)
    log(
        f"W11 run {run + 1}: {waiting}: x{ours['rate'] / control['rate']:.2f} the control's "
        f"jobs/s, complete_many x{ours['complete_ms'] / control['complete_ms']:.2f} the "
        f"control's a call; the dependent's enqueue {ours['enqueue_ms']:.1f} ms, its start "
        f"{ours['delay_ms']:.2f} ms after its last dependency's finish"
    )


async def enqueue(url: str, waits: bool) -> dict[str, Any]:
    """FANIN_DEPENDENCIES jobs by enqueue_many (seq 0 ..), then one by enqueue (the next
    seq), depending on all of them when `waits`: the seconds the first took, the last's
    milliseconds (its call alone: the driver's checks of the ids before it are apart), its
    id and its state right after."""
    import psycopg

    from taskboard.sql import parameters, producer_async

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        ids: list[int] = []
        started = time.perf_counter()
        for seqs in chunks(FANIN_DEPENDENCIES, ENQUEUE_CHUNK):
            params = parameters.enqueue_many_params(
                TASK, [{"seq": s} for s in seqs], QUEUE, None, 0, 5, None
            )
            ids += await producer_async.aenqueue_many(conn, params)
        enqueue_s = time.perf_counter() - started
        checked = time.perf_counter()
        params = parameters.enqueue_params(
            TASK,
            {"seq": FANIN_DEPENDENCIES},
            QUEUE,
            None,
            0,
            5,
            None,
            depends_on=ids if waits else None,
        )
        called = time.perf_counter()
        last = await producer_async.aenqueue(conn, params)
        returned = time.perf_counter()
        row = await (
            await conn.execute(
                "SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s", (last,)
            )
        ).fetchone()
    assert row is not None
    state, left = row
    return {
        "enqueue_s": enqueue_s,
        "last_id": last,
        "last_enqueue_ms": (returned - called) * 1000,
        "last_params_ms": (called - checked) * 1000,
        "last_state": state,
        "last_dependencies_left": left,
    }


async def stamps_held(url: str, last: int) -> dict[str, Any]:
    """What the jobs' own stamps say after the drain: how many of the other jobs succeeded
    at their first attempt, the last job's state, attempt and start, and the latest finish
    of the others (a reclaim would rewrite started_at, and a second attempt shows)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                """
                SELECT count(*) FILTER (WHERE j.id <> %(last)s AND j.state = 'succeeded'
                                          AND j.attempt = 1),
                       count(*) FILTER (WHERE j.id <> %(last)s),
                       max(j.finished_at) FILTER (WHERE j.id <> %(last)s),
                       max(j.started_at) FILTER (WHERE j.id <> %(last)s),
                       (SELECT d.state FROM taskboard.jobs AS d WHERE d.id = %(last)s),
                       (SELECT d.attempt FROM taskboard.jobs AS d WHERE d.id = %(last)s),
                       (SELECT d.started_at FROM taskboard.jobs AS d WHERE d.id = %(last)s),
                       (SELECT count(*) FROM taskboard.job_dependencies)
                  FROM taskboard.jobs AS j
                """,
                {"last": last},
            )
        ).fetchone()
    assert row is not None
    ok, others, last_finish, last_other_start, state, attempt, started, edges = row
    return {
        "others_succeeded_first_attempt": ok,
        "others": others,
        "others_last_finished_at": last_finish,
        "others_last_started_at": last_other_start,
        "last_state": state,
        "last_attempt": attempt,
        "last_started_at": started,
        "edges_left": edges,
    }


async def drain(bench: Bench, label: str, waits: bool, run: int) -> dict[str, float]:
    import psycopg
    from psycopg import sql

    n = FANIN_DEPENDENCIES + 1
    url = bench.fresh(OURS, "w11")  # the database w11_taskboard
    with psycopg.connect(bench.server.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET track_functions = 'pl'").format(
                sql.Identifier(f"w11_{OURS}")
            )
        )
    enqueued = await enqueue(url, waits)
    expected = ("waiting", FANIN_DEPENDENCIES) if waits else ("queued", None)
    if (enqueued["last_state"], enqueued["last_dependencies_left"]) != expected:
        raise RuntimeError(
            f"W11 {label}: the last job is {enqueued['last_state']}, dependencies_left "
            f"{enqueued['last_dependencies_left']}, after its enqueue; expected {expected[0]}, "
            f"dependencies_left {expected[1]}"
        )
    if bench.analyze:
        analyze(url)
    checkpoint(bench.server)
    out = bench.work / f"fanin-{'waits' if waits else 'control'}-{run}.json"
    stamps, drain_s, server_cpu = await bench.timed_drain(OURS, url, FANIN_CONCURRENCY, n, out)
    stats = await function_stats(url, time.monotonic() + STATS_TIMEOUT_S, FUNCTIONS)
    held = await stamps_held(url, enqueued["last_id"])
    if held["others_succeeded_first_attempt"] != FANIN_DEPENDENCIES:
        raise RuntimeError(
            f"W11 {label}: {held['others_succeeded_first_attempt']:,} of "
            f"{FANIN_DEPENDENCIES:,} jobs succeeded at their first attempt"
        )
    if held["last_state"] != "succeeded" or held["last_attempt"] != 1:
        raise RuntimeError(
            f"W11 {label}: THE LAST JOB DID NOT RUN ONCE: {held['last_state']} at attempt "
            f"{held['last_attempt']}"
        )
    delay: dt.timedelta = held["last_started_at"] - held["others_last_finished_at"]
    delay_ms = delay / dt.timedelta(milliseconds=1)
    if waits and delay_ms < 0:
        raise RuntimeError(
            f"W11 {label}: THE DEPENDENT STARTED BEFORE ITS DEPENDENCIES ENDED: at "
            f"{held['last_started_at']}, {-delay_ms:.3f} ms before the last finish "
            f"({held['others_last_finished_at']})"
        )
    if held["edges_left"] != 0:
        raise RuntimeError(f"W11 {label}: {held['edges_left']:,} dependency edges left")
    claim, complete = stats.get("claim"), stats.get("complete_many")
    if not claim or not claim["calls"] or not complete or not complete["calls"]:
        raise RuntimeError(f"W11 {label}: no claim or complete_many in pg_stat_user_functions")
    rate = n / drain_s
    claim_ms = claim["total_ms"] / claim["calls"]
    complete_ms = complete["total_ms"] / complete["calls"]
    what = f"c={FANIN_CONCURRENCY}, {n:,} jobs, {label}"
    bench.samples.add(Line("W11", f"drain {what}", "jobs/s", True), OURS, rate)
    bench.samples.add(
        Line("W11", f"server CPU per job {what}", "µs", False), OURS, server_cpu["us_per_job"]
    )
    bench.samples.add(Line("W11", f"claim a call, {label}", "ms", False), OURS, claim_ms)
    bench.samples.add(Line("W11", f"complete_many a call, {label}", "ms", False), OURS, complete_ms)
    bench.samples.add(
        Line("W11", f"enqueue of the last job, {label}", "ms", False),
        OURS,
        enqueued["last_enqueue_ms"],
    )
    if waits:
        bench.samples.add(
            Line("W11", "dependent's start after its last dependency's finish", "ms", False),
            OURS,
            delay_ms,
        )
    bench.record(
        {
            "workload": "W11",
            "case": label,
            "depends_on_all": waits,
            "concurrency": FANIN_CONCURRENCY,
            "run": run,
            "jobs": n,
            "enqueue_s": enqueued["enqueue_s"],
            "last_enqueue_ms": enqueued["last_enqueue_ms"],
            "last_params_ms": enqueued["last_params_ms"],
            "drain_s": drain_s,
            "startup_s": stamps["first_start"] - stamps["process_start"],
            "server_cpu": server_cpu,
            "functions": stats,
            "jobs_a_claim": n / claim["calls"],
            "jobs_a_completion": n / complete["calls"],
            # The last job's start after the others' last finish (negative: it started
            # while others ran, as the control's may), and after the others' last start.
            "last_start_after_last_finish_ms": delay_ms,
            "last_start_after_last_other_start_ms": (
                held["last_started_at"] - held["others_last_started_at"]
            )
            / dt.timedelta(milliseconds=1),
        }
    )
    settle = stats.get("settle_dependents")
    log(
        f"W11 {label}: drain {rate:,.0f} jobs/s, server CPU {server_cpu['us_per_job']:.0f} "
        f"µs/job, claim {claim_ms:.3f} ms a call ({claim['calls']:,} calls), complete_many "
        f"{complete_ms:.3f} ms a call ({complete['calls']:,} calls)"
        + (
            f", settle_dependents {settle['total_ms'] / settle['calls']:.3f} ms a call "
            f"({settle['calls']:,} calls)"
            if settle and settle["calls"]
            else ""
        )
        + f"; the last job's enqueue {enqueued['last_enqueue_ms']:.1f} ms, its start "
        f"{delay_ms:.2f} ms after the others' last finish"
    )
    return {
        "rate": rate,
        "complete_ms": complete_ms,
        "enqueue_ms": enqueued["last_enqueue_ms"],
        "delay_ms": delay_ms,
    }
