"""The rate limit attacked with real concurrent sessions: claimers in READ COMMITTED,
REPEATABLE READ and SERIALIZABLE taking batches of every size, leases left to expire
and reclaimed (a reclaim is a start), jobs completed, failed with a retry, released
and cancelled; per queue and per key. Every start a committed claim made is placed
on the database's clock (its lease's deadline less the lease it asked for), and no
window of the limit's length may hold more than the limit."""

from __future__ import annotations

import bisect
import random
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta

import psycopg
import pytest
from psycopg import errors as pgerrors

from tests.support.database import MakeDatabase

KEYS = 8
JOBS = 800
CLAIMERS = 6
SECONDS = 5.0
ISOLATION = [
    psycopg.IsolationLevel.READ_COMMITTED,
    psycopg.IsolationLevel.REPEATABLE_READ,
    psycopg.IsolationLevel.SERIALIZABLE,
]

Start = tuple[str | None, datetime]  # a start's concurrency key and time


def enqueue(url: str, queue: str) -> None:
    """JOBS jobs over KEYS keys and no key, some with a priority."""
    rng = random.Random(queue)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s,"
            " max_attempts => 3, concurrency_keys => %s)",
            [JOBS, queue, [None if n % 5 == 0 else f"k{rng.randrange(KEYS)}" for n in range(JOBS)]],
        )


def claimer(
    url: str,
    queue: str,
    n: int,
    until: float,
    starts: list[tuple[int, datetime]],
    errors: list[BaseException],
) -> None:
    """Claims in its isolation level; keeps the starts of the claims that committed."""
    rng = random.Random(n)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.isolation_level = ISOLATION[n % len(ISOLATION)]
            while time.monotonic() < until:
                lease = rng.choice([0.15, 5.0])
                try:
                    with conn.transaction():
                        rows = conn.execute(
                            "SELECT job_id, token, lease_expires_at FROM taskboard.claim(%s, %s, %s, %s)",
                            [queue, f"w{n}", rng.choice([1, 3, 10]), timedelta(seconds=lease)],
                        ).fetchall()
                except pgerrors.SerializationFailure:
                    continue
                starts.extend(
                    (job_id, expires - timedelta(seconds=lease)) for job_id, _, expires in rows
                )
                time.sleep(rng.uniform(0, 0.01))
                for job_id, token, _ in rows:
                    action = rng.choice(
                        ["complete", "complete", "fail", "release", "cancel", "drop"]
                    )
                    try:
                        if action == "complete":
                            conn.execute("SELECT taskboard.complete(%s, %s)", [job_id, token])
                        elif action == "fail":
                            conn.execute(
                                "SELECT taskboard.fail(%s, %s, 'boom', retry_in => '0.01s')",
                                [job_id, token],
                            )
                        elif action == "release":
                            conn.execute("SELECT taskboard.release(%s, %s)", [job_id, token])
                        elif action == "cancel":
                            conn.execute("SELECT taskboard.cancel(%s)", [job_id])
                        # "drop": the lease is left to expire and the job to be reclaimed
                    except pgerrors.SerializationFailure:
                        pass
    except (AssertionError, psycopg.Error) as exc:  # reported by the main thread
        errors.append(exc)


def race(url: str, queue: str) -> list[Start]:
    """CLAIMERS claimers for SECONDS: every start their committed claims made, with its key."""
    errors: list[BaseException] = []
    claimed: list[tuple[int, datetime]] = []
    until = time.monotonic() + SECONDS
    threads = [
        threading.Thread(target=claimer, args=(url, queue, n, until, claimed, errors))
        for n in range(CLAIMERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 60)
    assert not errors, errors[0]
    with psycopg.connect(url, autocommit=True) as conn:
        keys: dict[int, str | None] = dict(
            conn.execute(
                "SELECT id, concurrency_key FROM taskboard.jobs WHERE queue = %s", [queue]
            ).fetchall()
        )
    return [(keys[job_id], at) for job_id, at in claimed]


def most_in_a_window(starts: list[Start], per: timedelta, by_key: bool) -> int:
    """The most starts (of one key when by_key, keyless ones left out) in a window
    [t, t + per) opening at a start t."""
    groups: dict[str | None, list[datetime]] = defaultdict(list)
    for key, at in starts:
        if by_key and key is None:
            continue
        groups[key if by_key else None].append(at)
    most = 0
    for times in groups.values():
        times.sort()
        for i, at in enumerate(times):
            most = max(most, bisect.bisect_left(times, at + per) - i)
    return most


def set_limit(url: str, queue: str, starts: int, per: timedelta, by_key: bool) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT taskboard.set_rate_limit(%s, %s, %s, %s)", [queue, starts, per, by_key]
        )


@pytest.mark.parametrize("by_key", [False, True], ids=["per_queue", "per_key"])
def test_concurrent_claimers_never_start_more_than_the_limit_in_any_window(
    make_database: MakeDatabase, by_key: bool
) -> None:
    url = make_database(deploy=True)
    per = timedelta(seconds=0.5)
    limit = 2 if by_key else 6
    set_limit(url, "rated", limit, per, by_key)
    enqueue(url, "rated")
    starts = race(url, "rated")
    assert most_in_a_window(starts, per, by_key) <= limit
    # The claimers pressed on the limit: its windows were full, and one start fewer per
    # window, or a window half as long, is not what happened.
    assert most_in_a_window(starts, per, by_key) == limit
    assert most_in_a_window(starts, per * 2, by_key) > limit
    # At least half the starts the limit allows one queue or key in the time.
    assert len(starts) >= limit * SECONDS / per.total_seconds() / 2


# -- the controls: the same race against broken claims fails ------------------------------

CLAIM = "taskboard.claim(text,text,integer,interval)"
PICK_KEYED = "taskboard.pick_keyed(text,timestamptz,integer,text[],integer,integer,interval,boolean,bigint[])"
WINDOW_ROOM = "taskboard.window_room(text,integer,interval,timestamptz)"
# Each mutant: whether its limit is per key, and the functions of claim it edits, and how.
MUTANTS = {
    # The window counted half as long.
    "short_window": (
        False,
        [
            (
                WINDOW_ROOM,
                "AND s.started_at > window_room.clock - window_room.rate_per);",
                "AND s.started_at > window_room.clock - window_room.rate_per / 2);",
            )
        ],
    ),
    # Reclaims not counted as starts: the round's cap is the batch.
    "free_reclaims": (
        False,
        [
            (
                CLAIM,
                "            v_room := LEAST(v_room, v_cap);\n",
                "            v_room := LEAST(v_room, v_cap);\n            v_cap := v_want;\n",
            )
        ],
    ),
    # Per key, a key's reclaims not taken from its room.
    "key_reclaims_free": (
        True,
        [
            (
                PICK_KEYED,
                "- coalesce((SELECT c.n FROM reclaimed AS c WHERE c.ck = n.ck), 0)",
                "- 0 * coalesce((SELECT c.n FROM reclaimed AS c WHERE c.ck = n.ck), 0)",
            )
        ],
    ),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_race_catches_a_broken_claim(make_database: MakeDatabase, mutant: str) -> None:
    url = make_database(deploy=True)
    by_key, edits = MUTANTS[mutant]
    with psycopg.connect(url, autocommit=True) as conn:
        for function, old, new in edits:
            row = conn.execute("SELECT pg_get_functiondef(%s::regprocedure)", [function]).fetchone()
            assert row is not None
            source = str(row[0])
            assert old in source, old
            conn.execute(source.replace(old, new))
    per = timedelta(seconds=0.5)
    limit = 2 if by_key else 6
    set_limit(url, "rated", limit, per, by_key)
    enqueue(url, "rated")
    starts = race(url, "rated")
    assert most_in_a_window(starts, per, by_key) > limit
