"""W4 renewal (Taskboard only): one renew_many of RENEW_LEASES held leases, timed as the
worker calls it; median of RENEW_REPEATS calls a run."""

from __future__ import annotations

import statistics
import time
from typing import Any

from measure import OURS, Bench, log
from report import Line
from systems import SYSTEMS

RENEW_LEASES = 1_000
RENEW_REPEATS = 10


async def table_updates(conn: Any) -> tuple[int, int]:
    """(row updates, HOT updates) of taskboard.jobs so far, this session's included."""
    await conn.execute("SELECT pg_stat_force_next_flush()")
    await conn.execute("SELECT 1")  # the flush happens when that transaction ends
    cur = await conn.execute(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'taskboard.jobs'::regclass"
    )
    row = await cur.fetchone()
    return int(row[0]), int(row[1])


async def renewal(bench: Bench, run: int) -> None:
    import psycopg

    from taskboard.sql import worker as sql_worker

    url = bench.fresh(OURS, "w4")
    await SYSTEMS[OURS].enqueue_batches(url, [range(RENEW_LEASES)])
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        held = await sql_worker.claim(conn, "default", "bench-renewer", RENEW_LEASES, 60.0)
        if len(held) != RENEW_LEASES:
            raise RuntimeError(f"claimed {len(held)} of {RENEW_LEASES} jobs")
        ids = [h.job_id for h in held]
        tokens = [h.token for h in held]
        await sql_worker.renew_many(conn, ids, tokens, 60.0)  # warm-up: plan and caches
        before = await table_updates(conn)
        times = []
        for _ in range(RENEW_REPEATS):
            started = time.perf_counter()
            answers = await sql_worker.renew_many(conn, ids, tokens, 60.0)
            times.append((time.perf_counter() - started) * 1000)
            if sum(1 for v in answers if v is not None) != RENEW_LEASES:
                raise RuntimeError("renew_many refused a lease it should have renewed")
        after = await table_updates(conn)
    updates, hot = after[0] - before[0], after[1] - before[1]
    value = statistics.median(times)
    bench.samples.add(Line("W4", f"renew_many {RENEW_LEASES:,} leases", "ms", False), OURS, value)
    bench.record(
        {
            "workload": "W4",
            "system": OURS,
            "run": run,
            "times_ms": times,
            "updates": updates,
            "hot_updates": hot,
        }
    )
    log(f"W4 renew_many {RENEW_LEASES} leases: {value:.1f} ms; {hot} of {updates} row updates HOT")
