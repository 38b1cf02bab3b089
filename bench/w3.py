"""W3 scale (Taskboard only): claim+complete as one table grows, then a churn run.

Scale: one database copied from Taskboard's template. Its jobs table grows to
each size in turn (only the difference is inserted) with finished jobs, as
the table's owner would see them after real work: `INSERT ... SELECT
generate_series` straight into taskboard.jobs, one statement per
GROW_CHUNK rows, GROW_CONNECTIONS connections at once on disjoint id
ranges, not the API (the API would take half an hour to finish 10M jobs
here). Every index stays in place and the durability settings are the
server's. Every row satisfies the table's CHECK constraints and looks like
a job `complete` finished: state 'succeeded', attempt 1 of 5, the lease
token, deadline and worker name the claim left, a small payload, created_at
and finished_at spread over the past SPREAD. The two uuids (lease token,
idempotency key) are md5s of the row number, not gen_random_uuid(): same
type and width, no index on either, and gen_random_uuid() costs about 4 us
a call in this server build, more than the rest of the row. Then VACUUM ANALYZE (what
autovacuum would have done to a table that size in steady state: hint bits,
visibility map, statistics) and a CHECKPOINT. At each size: `blocks` blocks,
each a fresh `enqueue_many` of `cycles` queued jobs then `cycles` cycles of
one claim(batch=1) and one complete, timed on the client around the two
calls on one connection; a block's value is its median cycle.

Churn: a fresh database, default autovacuum, `jobs` jobs through the API.
A producer enqueues with enqueue_many, CHURN_CHUNK a call, keeping at most
`backlog` jobs queued, starting once every consumer has made its first
claim on the empty queue (workers up before the work, as on an idle
queue: that first call is when claim's plan is made for the session);
`consumers` connections each loop claim(batch =
CHURN_BATCH) and complete_many of what they got, the two calls the Python
worker's control connection sends, without the handler machinery: the
statement mix the database sees from real workers, at the highest rate
this machine gives, which is what puts autovacuum to work. An operator's
cron runs prune(older_than => PRUNE_AGE, batch => PRUNE_BATCH) every
`sample_s` until it deletes less than a batch: without it finished rows
pile up, which is growth, not bloat. With `prune_by="workers"` there is no
cron: each consumer prunes as the worker's retention does, on its own
connection between cycles, one batch of the worker's size when due (about
every `sample_s`, jittered, again at once while a batch comes back full),
and that prune's time counts in the cycle it delayed. Every `sample_s` the jobs table's
statistics are sampled: dead and live tuples, heap and total size,
autovacuum runs, with the consumers' cycle latencies of that window and
what the database's active backends waited on (every WAIT_SAMPLE_S).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
import statistics
import time
from typing import Any

TASK = "noop"
QUEUE = "default"
WORKER = "bench-w3"
LEASE_S = 60.0
GROW_CHUNK = 1_000_000  # rows per INSERT statement while growing
GROW_CONNECTIONS = 2  # inserting at once, one core each on the 2-core bench machine
SPREAD = dt.timedelta(days=30)  # finished jobs' age spread
WARMUP_CYCLES = 20
CHURN_CHUNK = 1_000
CHURN_BATCH = 32
PRUNE_AGE = dt.timedelta(seconds=10)
PRUNE_BATCH = 10_000

# Finished jobs as `complete` leaves them. Row g of the table (1-based) was
# created at origin + g * step: ids and ages rise together, as they would.
GROW = """
INSERT INTO taskboard.jobs (
    id, queue, task, payload, state, priority, run_at, attempt, max_attempts,
    lease_token, lease_expires_at, claimed_by, idempotency_key, created_at, finished_at)
SELECT g, 'default', 'noop', pg_catalog.jsonb_build_object('seq', g), 'succeeded', 0, t.at, 1, 5,
       pg_catalog.md5(g::text || 'token')::uuid, t.at + interval '60 seconds', 'bench-w3-grower',
       pg_catalog.md5(g::text)::uuid, t.at, t.at + interval '25 milliseconds'
  FROM pg_catalog.generate_series(%(first)s::bigint, %(last)s::bigint) AS g,
       LATERAL (SELECT %(origin)s::timestamptz + g * %(step)s::interval) AS t(at)
"""

TABLE_STATS = """
SELECT n_live_tup, n_dead_tup, autovacuum_count, autoanalyze_count,
       pg_catalog.pg_relation_size('taskboard.jobs'),
       pg_catalog.pg_total_relation_size('taskboard.jobs')
  FROM pg_catalog.pg_stat_user_tables
 WHERE relid = 'taskboard.jobs'::regclass
"""

PRUNE = "SELECT taskboard.prune(older_than => %s, batch => %s)"

# Active backends of this database by what they wait on ('CPU' when nothing):
# sampled every WAIT_SAMPLE_S, summed per churn sample.
WAITS = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') || ' ' || backend_type, count(*)
  FROM pg_catalog.pg_stat_activity
 WHERE datname = pg_catalog.current_database()
   AND pid <> pg_catalog.pg_backend_pid()
   AND state IS DISTINCT FROM 'idle'
 GROUP BY 1
"""
WAIT_SAMPLE_S = 0.2


def human(n: int) -> str:
    """10000 -> '10k', 1000000 -> '1M', 2500000 -> '2.5M'."""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size:
            return f"{n / size:g}{unit}"
    return str(n)


def parse_count(text: str) -> int:
    """'10k', '1M', '10000000' or '1_000' -> int."""
    text = text.strip().replace("_", "").replace(",", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- scale -------------------------------------------------------------------


def grow(
    url: str,
    want: int,
    origin: dt.datetime,
    step: dt.timedelta,
    connections: int = GROW_CONNECTIONS,
) -> dict[str, Any]:
    """Insert finished jobs until the table holds `want` rows, then VACUUM ANALYZE.

    Returns timings and sizes. The new ids, after every id already used, are split into `connections` contiguous ranges, each inserted
    by its own connection (ids given explicitly, the identity's sequence moved
    past them afterwards), so every core works and no two backends share a
    btree leaf page.
    """
    import threading

    import psycopg

    def insert(first: int, last: int, errors: list[BaseException]) -> None:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                for a in range(first, last + 1, GROW_CHUNK):
                    b = min(last, a + GROW_CHUNK - 1)
                    conn.execute(GROW, {"first": a, "last": b, "origin": origin, "step": step})
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's thread
            errors.append(exc)

    with psycopg.connect(url, autocommit=True) as conn:
        have, top = conn.execute(
            "SELECT count(*), coalesce(max(id), 0) FROM taskboard.jobs"
        ).fetchone()
    n = max(0, want - have)
    out: dict[str, Any] = {"rows": want, "inserted": n, "connections": connections}
    started = time.perf_counter()
    share = max(1, -(-n // connections))
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=insert, args=(a, min(top + n, a + share - 1), errors))
        for a in range(top + 1, top + n + 1, share)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    out["insert_s"] = time.perf_counter() - started
    with psycopg.connect(url, autocommit=True) as conn:
        if n:
            conn.execute("SELECT pg_catalog.setval('taskboard.jobs_id_seq', %s)", [top + n])
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE taskboard.jobs")
        out["vacuum_analyze_s"] = time.perf_counter() - started
        heap, indexes, total = conn.execute(
            "SELECT pg_catalog.pg_relation_size('taskboard.jobs'),"
            " pg_catalog.pg_indexes_size('taskboard.jobs'),"
            " pg_catalog.pg_total_relation_size('taskboard.jobs')"
        ).fetchone()
        out.update(heap_bytes=heap, index_bytes=indexes, total_bytes=total)
    return out


async def sample(url: str, cycles: int, blocks: int) -> dict[str, Any]:
    """`blocks` blocks of `cycles` claim(batch=1)+complete cycles; every cycle's ms."""
    import psycopg

    from taskboard.sql import parameters, producer_async
    from taskboard.sql import worker as sql_worker

    out: dict[str, Any] = {"blocks": []}
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for block in range(blocks):
            extra = WARMUP_CYCLES if block == 0 else 0
            params = parameters.enqueue_many_params(
                TASK, [{"seq": s} for s in range(cycles + extra)], QUEUE, None, 0, 5, None
            )
            await producer_async.aenqueue_many(conn, params)
            times = []
            for i in range(cycles + extra):
                started = time.perf_counter()
                got = await sql_worker.claim(conn, QUEUE, WORKER, 1, LEASE_S)
                if len(got) != 1:
                    raise RuntimeError(f"claim returned {len(got)} jobs, 1 expected")
                if not await sql_worker.complete(conn, got[0].job_id, got[0].token, None):
                    raise RuntimeError(f"complete refused job {got[0].job_id}")
                if i >= extra:
                    times.append((time.perf_counter() - started) * 1000)
            out["blocks"].append(times)
    return out


# -- churn -------------------------------------------------------------------


async def churn(
    url: str,
    jobs: int,
    *,
    backlog: int,
    consumers: int,
    sample_s: float,
    prune_by: str = "cron",
) -> dict[str, Any]:
    """Push `jobs` jobs through the API; the time series and a summary.

    `prune_by`: "cron" (an operator's connection) or "workers" (each consumer
    between its cycles, as the worker's retention does).
    """
    import psycopg

    from taskboard.sql import parameters, producer_async
    from taskboard.sql import worker as sql_worker
    from taskboard.worker.control import CONTROL_LOCK_TIMEOUT_SECONDS
    from taskboard.worker.retention import JITTER
    from taskboard.worker.retention import PRUNE_BATCH as WORKER_PRUNE_BATCH

    if prune_by not in ("cron", "workers"):
        raise ValueError(f"prune_by must be cron or workers, got {prune_by!r}")

    t0 = time.perf_counter()
    enqueued = 0
    done = 0
    cycles: list[tuple[float, float, int]] = []  # (seconds since t0, ms, jobs) per cycle
    producer_done = asyncio.Event()
    consumers_up = asyncio.Event()
    finished = asyncio.Event()
    pruned = {"rows": 0, "calls": 0, "seconds": 0.0}

    async def producer() -> None:
        nonlocal enqueued
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await consumers_up.wait()
            while enqueued < jobs:
                if enqueued - done >= backlog:
                    await asyncio.sleep(0.005)
                    continue
                n = min(CHURN_CHUNK, jobs - enqueued)
                params = parameters.enqueue_many_params(
                    TASK,
                    [{"seq": s} for s in range(enqueued, enqueued + n)],
                    QUEUE,
                    None,
                    0,
                    5,
                    None,
                )
                await producer_async.aenqueue_many(conn, params)
                enqueued += n
        producer_done.set()

    up = 0

    async def consumer(k: int) -> None:
        nonlocal done, up
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            # Set up as a worker's control connection is: its claim cursor kept.
            await sql_worker.prepare_claimer(conn, CONTROL_LOCK_TIMEOUT_SECONDS)
            # Workers are up before the work arrives: each first claim finds
            # the queue empty, as a worker's does when it starts on an idle queue.
            await sql_worker.claim(conn, QUEUE, f"{WORKER}-{k}", CHURN_BATCH, LEASE_S)
            up += 1
            if up == consumers:
                consumers_up.set()
            rng = random.Random(k)
            prune_at = time.perf_counter() + rng.uniform(0, sample_s)
            while not finished.is_set():
                started = time.perf_counter()
                if prune_by == "workers" and started >= prune_at:
                    row = await (
                        await conn.execute(PRUNE, [PRUNE_AGE, WORKER_PRUNE_BATCH])
                    ).fetchone()
                    deleted = int(row[0])
                    pruned["calls"] += 1
                    pruned["rows"] += deleted
                    pruned["seconds"] += time.perf_counter() - started
                    full = deleted >= WORKER_PRUNE_BATCH
                    pause = 0.0 if full else sample_s * rng.uniform(1 - JITTER, 1 + JITTER)
                    prune_at = time.perf_counter() + pause
                got = await sql_worker.claim(conn, QUEUE, f"{WORKER}-{k}", CHURN_BATCH, LEASE_S)
                if not got:
                    if producer_done.is_set() and done >= jobs:
                        finished.set()
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
                if done >= jobs:
                    finished.set()

    async def operator_cron() -> None:
        if prune_by != "cron":
            return
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while not finished.is_set():
                try:
                    await asyncio.wait_for(finished.wait(), timeout=sample_s)
                    return
                except TimeoutError:
                    pass
                started = time.perf_counter()
                while True:
                    row = await (await conn.execute(PRUNE, [PRUNE_AGE, PRUNE_BATCH])).fetchone()
                    pruned["calls"] += 1
                    pruned["rows"] += int(row[0])
                    if int(row[0]) < PRUNE_BATCH:
                        break
                pruned["seconds"] += time.perf_counter() - started

    series: list[dict[str, Any]] = []
    waits: dict[str, int] = {}  # what the busy backends were doing, this window

    async def watch_waits() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while not finished.is_set():
                for event, n in await (await conn.execute(WAITS)).fetchall():
                    waits[event] = waits.get(event, 0) + n
                waits["(snapshots)"] = waits.get("(snapshots)", 0) + 1
                await asyncio.sleep(WAIT_SAMPLE_S)

    async def monitor() -> None:
        seen = 0
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while True:
                stop = finished.is_set()
                row = await (await conn.execute(TABLE_STATS)).fetchone()
                live, dead, autovacuums, autoanalyzes, heap, total = row
                now = time.perf_counter() - t0
                window = [ms for _, ms, _ in cycles[seen:]]
                seen = len(cycles)
                point = {
                    "t_s": round(now, 2),
                    "enqueued": enqueued,
                    "done": done,
                    "pruned": pruned["rows"],
                    "cycles": len(window),
                    "cycle_p50_ms": round(statistics.median(window), 3) if window else None,
                    "cycle_p99_ms": round(quantile(window, 0.99), 3) if window else None,
                    "n_live_tup": live,
                    "n_dead_tup": dead,
                    "autovacuum_count": autovacuums,
                    "autoanalyze_count": autoanalyzes,
                    "heap_bytes": heap,
                    "total_bytes": total,
                    "waits": dict(sorted(waits.items(), key=lambda kv: -kv[1])),
                }
                waits.clear()
                series.append(point)
                if stop:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), timeout=sample_s)

    tasks = [
        asyncio.create_task(producer()),
        *(asyncio.create_task(consumer(k)) for k in range(consumers)),
        asyncio.create_task(operator_cron()),
        asyncio.create_task(monitor()),
        asyncio.create_task(watch_waits()),
    ]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    elapsed = cycles[-1][0] - (cycles[0][0] - cycles[0][1] / 1000)
    tenth = max(1, len(cycles) // 10)
    first = [ms for _, ms, _ in cycles[:tenth]]
    last = [ms for _, ms, _ in cycles[-tenth:]]
    summary = {
        "jobs": done,
        "seconds": elapsed,
        "jobs_per_s": done / elapsed,
        "cycles": len(cycles),
        "jobs_per_cycle": done / len(cycles),
        "p50_first_tenth_ms": statistics.median(first),
        "p50_last_tenth_ms": statistics.median(last),
        "p99_first_tenth_ms": quantile(first, 0.99),
        "p99_last_tenth_ms": quantile(last, 0.99),
        "p99_ms": quantile([ms for _, ms, _ in cycles], 0.99),
        "prune_by": prune_by,
        "max_dead_tup": max(p["n_dead_tup"] for p in series),
        "peak_total_bytes": max(p["total_bytes"] for p in series),
        "end_total_bytes": series[-1]["total_bytes"],
        "peak_heap_bytes": max(p["heap_bytes"] for p in series),
        "end_heap_bytes": series[-1]["heap_bytes"],
        "autovacuums": series[-1]["autovacuum_count"],
        "pruned_rows": pruned["rows"],
        "prune_calls": pruned["calls"],
        "prune_seconds": pruned["seconds"],
    }
    return {"summary": summary, "series": series}


def series_lines(series: list[dict[str, Any]], most: int = 12) -> list[str]:
    """A few rows of the churn's time series, for the log."""
    step = max(1, -(-len(series) // most))
    picked = series[::step]
    if picked[-1] is not series[-1]:
        picked.append(series[-1])
    out = [
        "    t s      done   pruned  p50 ms  p99 ms   live tup   dead tup  heap MB  total MB  autovac"
    ]
    for p in picked:
        p50 = "-" if p["cycle_p50_ms"] is None else f"{p['cycle_p50_ms']:.2f}"
        p99 = "-" if p["cycle_p99_ms"] is None else f"{p['cycle_p99_ms']:.2f}"
        out.append(
            f"  {p['t_s']:5.0f} {p['done']:9,} {p['pruned']:8,} {p50:>7} {p99:>7} "
            f"{p['n_live_tup']:10,} {p['n_dead_tup']:10,} {p['heap_bytes'] / 2**20:8.1f} "
            f"{p['total_bytes'] / 2**20:9.1f} {p['autovacuum_count']:8}"
        )
    return out
