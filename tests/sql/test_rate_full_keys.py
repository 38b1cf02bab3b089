"""A claim under a rate per key with thousands of full keys ahead of the jobs it may take
is bounded: its work is linear in the full keys, told by the tables' own counters in the
claim's transaction, never by a clock.

The keys ahead each have a queued job and a window already full (their starts logged
as the claims of the last hour would have, written as the owner); behind them come the
jobs of keys with room. A claim must still take those, in claim order, up to each key's
room, and read each full key's queued job and count its window a small constant number
of times: a claim that went round again from the head of the queue for every sixteen
times its room read the full keys' jobs about N / 32 times each (quadratic), 6.8 s for
one claim with 16,000 of them."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect

QUEUE = "metered"
RATE_STARTS = 2  # a key's starts in an hour
FREE_KEYS = 40  # keys with room, behind the full ones
FREE_JOBS = 3  # queued jobs of each key with room
BATCHES = (1, 32)

# The table's counters of the current transaction: rows fetched from taskboard.jobs
# through its indexes, and index scans of the starts' log (one for each count of a
# key's window), and sequential scans of either.
COUNTERS = """
SELECT coalesce(sum(idx_tup_fetch) FILTER (WHERE relid = 'taskboard.jobs'::regclass), 0),
       coalesce(sum(idx_scan) FILTER (WHERE relid = 'taskboard.queue_starts'::regclass), 0),
       coalesce(sum(seq_scan), 0)
  FROM pg_catalog.pg_stat_xact_user_tables
 WHERE relid IN ('taskboard.jobs'::regclass, 'taskboard.queue_starts'::regclass)
"""


def fill(owner: psycopg.Connection[Any], full_keys: int) -> None:
    """`full_keys` keys each with RATE_STARTS starts in the window and one queued job, then
    FREE_KEYS keys behind them, each with FREE_JOBS queued jobs; the odd ones started once."""
    owner.execute(
        "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
        " SELECT %s, 'full' || g, clock_timestamp() - interval '10 minutes'"
        "   FROM generate_series(1, %s) AS g, generate_series(1, %s) AS s",
        [QUEUE, full_keys, RATE_STARTS],
    )
    owner.execute(
        "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
        " SELECT %s, 'free' || g, clock_timestamp() - interval '10 minutes'"
        "   FROM generate_series(1, %s, 2) AS g",
        [QUEUE, FREE_KEYS],
    )
    owner.execute(
        "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s,"
        " concurrency_keys => (SELECT array_agg('full' || g ORDER BY g)"
        "                        FROM generate_series(1, %s) AS g))",
        [full_keys, QUEUE, full_keys],
    )
    owner.execute(
        "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s,"
        " concurrency_keys => (SELECT array_agg('free' || g ORDER BY s, g)"
        "                        FROM generate_series(1, %s) AS g, generate_series(1, %s) AS s))",
        [FREE_KEYS * FREE_JOBS, QUEUE, FREE_KEYS, FREE_JOBS],
    )
    owner.execute("ANALYZE taskboard.jobs, taskboard.queue_starts")


def room(key: str) -> int:
    """The starts left in the window of a key with room, as fill() logged them."""
    return RATE_STARTS - (int(key.removeprefix("free")) % 2)


def expected(owner: psycopg.Connection[Any], batch: int) -> list[int]:
    """What a claim of `batch` must take: the queued jobs of keys with room in claim
    order, each key's first ones up to its room."""
    rows = owner.execute(
        "SELECT id, concurrency_key FROM taskboard.jobs"
        " WHERE queue = %s AND state = 'queued' AND concurrency_key LIKE 'free%%'"
        " ORDER BY priority DESC, run_at, id",
        [QUEUE],
    ).fetchall()
    taken: dict[str, int] = {}
    out: list[int] = []
    for job_id, key in rows:
        if taken.get(key, 0) < room(key):
            taken[key] = taken.get(key, 0) + 1
            out.append(job_id)
    return out[:batch]


def work_of_a_claim(url: str, full_keys: int, batch: int) -> tuple[int, int]:
    """Jobs fetched and windows counted by one claim of `batch` in a worker session begun
    on the empty queue (the plan it keeps is made then), with `full_keys` full keys
    ahead; the claim's answer checked against the keys' rooms."""
    with (
        psycopg.connect(url, autocommit=True) as owner,
        connect(url, "taskboard_worker") as worker,
    ):
        owner.execute(
            "SELECT taskboard.set_rate_limit(%s, %s, '1 hour', by_key => true)",
            [QUEUE, RATE_STARTS],
        )
        for _ in range(8):  # the worker starts before any work arrives
            assert (
                worker.execute(
                    "SELECT * FROM taskboard.claim(%s, 'w', %s)", [QUEUE, batch]
                ).fetchall()
                == []
            )
        fill(owner, full_keys)
        want = expected(owner, batch)
        with worker.transaction():
            before = worker.execute(COUNTERS).fetchone()
            got = [
                r[0]
                for r in worker.execute(
                    "SELECT job_id FROM taskboard.claim(%s, 'w', %s, '1 hour')", [QUEUE, batch]
                ).fetchall()
            ]
            after = worker.execute(COUNTERS).fetchone()
        assert before is not None and after is not None
        assert got == want, "the claim took the jobs of keys with room, in claim order"
        assert after[2] == before[2], "the claim scanned taskboard.jobs or the starts' log"
        return after[0] - before[0], after[1] - before[1]


@pytest.mark.parametrize("batch", BATCHES)
def test_a_claim_behind_16000_full_keys_reads_each_a_few_times_not_once_a_round(
    make_database: MakeDatabase, batch: int
) -> None:
    """16,000 full keys ahead: the claim fetches each one's queued job a few times (the
    looks that find them, twice as far each time, and the read that picks past them) and
    counts each one's window about once, whatever the batch."""
    full_keys = 16_000
    fetched, counted = work_of_a_claim(make_database(deploy=True), full_keys, batch)
    assert fetched <= 5 * full_keys + 100 * batch, (
        f"a claim of {batch} behind {full_keys:,} full keys fetched {fetched:,} jobs"
    )
    assert counted <= full_keys + 100 * batch, (
        f"a claim of {batch} behind {full_keys:,} full keys counted {counted:,} windows"
    )


def test_a_claims_work_grows_linearly_with_the_full_keys_ahead(
    make_database: MakeDatabase,
) -> None:
    """Four times the full keys ahead, about four times the work (not sixteen)."""
    small, large = 2_000, 8_000
    fetched_small, counted_small = work_of_a_claim(make_database(deploy=True), small, 1)
    fetched_large, counted_large = work_of_a_claim(make_database(deploy=True), large, 1)
    assert fetched_large <= 5 * fetched_small, (
        f"jobs fetched: {fetched_small:,} behind {small:,} full keys, "
        f"{fetched_large:,} behind {large:,}"
    )
    assert counted_large <= 5 * counted_small, (
        f"windows counted: {counted_small:,} behind {small:,} full keys, "
        f"{counted_large:,} behind {large:,}"
    )
