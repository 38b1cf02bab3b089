"""The key limit attacked with real concurrent sessions: claimers in READ COMMITTED,
REPEATABLE READ and SERIALIZABLE; leases left to expire and reclaimed; jobs completed,
failed with a retry, released, cancelled under a live lease and retried; dedupe keys,
priorities, jobs due later and jobs without a key; and an admin changing the limit
while claims are in flight."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from psycopg import errors as pgerrors

from tests.support.database import MakeDatabase

KEYS = 12
JOBS = 600
CLAIMERS = 6
ISOLATION = [
    psycopg.IsolationLevel.READ_COMMITTED,
    psycopg.IsolationLevel.REPEATABLE_READ,
    psycopg.IsolationLevel.SERIALIZABLE,
]


def enqueue_mixed(url: str, queue: str, rng: random.Random) -> None:
    """JOBS jobs over KEYS keys and no key, some with a dedupe key, a priority or a later run_at."""
    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(JOBS):
            key = None if n % 7 == 0 else f"k{rng.randrange(KEYS)}"
            conn.execute(
                "SELECT taskboard.enqueue('t', '{}', %s, run_at => clock_timestamp() + %s,"
                " priority => %s, max_attempts => 3, dedupe_key => %s, concurrency_key => %s)",
                [
                    queue,
                    f"{rng.choice([0, 0, 0, 0.3, 1.0])} seconds",
                    rng.choice([0, 0, 5]),
                    f"d{n % 50}" if n % 5 == 0 else None,
                    key,
                ],
            )


HOLDERS = """SELECT coalesce(max(n), 0) FROM (
                 SELECT count(*) AS n FROM taskboard.jobs
                  WHERE queue = %s AND concurrency_key IS NOT NULL
                    AND (state = 'running' OR held_until > clock_timestamp())
                  GROUP BY concurrency_key) AS k"""


def monitor(url: str, queue: str, stop: threading.Event, seen: list[int]) -> None:
    """The most holders of one key in each committed snapshot, until stop."""
    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute(HOLDERS, [queue]).fetchone()
            assert row is not None
            seen.append(int(row[0]))
            stop.wait(0.002)


CHECK = """SELECT q.max_running_per_key, j.concurrency_key,
                  (SELECT count(*) FROM taskboard.jobs AS h
                    WHERE h.queue = j.queue AND h.concurrency_key = j.concurrency_key
                      AND (h.state = 'running' OR h.held_until > clock_timestamp()))
             FROM taskboard.jobs AS j
             JOIN taskboard.queues AS q ON q.queue = j.queue
            WHERE j.id = ANY(%s) AND j.concurrency_key IS NOT NULL
              AND NOT EXISTS (SELECT FROM taskboard.job_events AS e
                               WHERE e.job_id = j.id AND e.kind = 'reclaimed'
                                 AND e.at = j.lease_expires_at - %s::interval)"""


def claimer(
    url: str, queue: str, n: int, until: float, bad: list[str], errors: list[BaseException]
) -> None:
    """Claims in its isolation level and does something different with each job. Inside
    the claim's transaction (the queue's row still locked by it, so no other claim can add
    a holder, and a snapshot older than another claim's commit would have raised 40001),
    every key it started a job of (a reclaim aside) has at most the limit in force."""
    rng = random.Random(n)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.isolation_level = ISOLATION[n % len(ISOLATION)]
            while time.monotonic() < until:
                lease = rng.choice(["0.2 seconds", "5 seconds"])
                try:
                    with conn.transaction():
                        rows = conn.execute(
                            "SELECT job_id, token FROM taskboard.claim(%s, %s, %s, %s)",
                            [queue, f"w{n}", rng.choice([1, 2, 5, 20]), lease],
                        ).fetchall()
                        if rows:
                            for limit, key, holders in conn.execute(
                                CHECK, [[r[0] for r in rows], lease]
                            ).fetchall():
                                if limit is not None and holders > limit:
                                    bad.append(f"{key}: {holders} holders under a limit of {limit}")
                except pgerrors.SerializationFailure:
                    continue
                time.sleep(rng.uniform(0, 0.02))
                for job_id, token in rows:
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
                            if rng.random() < 0.7:
                                conn.execute("SELECT taskboard.retry(%s)", [job_id])
                        # "drop": the lease is left to expire and the job to be reclaimed
                    except pgerrors.SerializationFailure:
                        pass
    except (AssertionError, psycopg.Error) as exc:  # reported by the main thread
        errors.append(exc)


def run_race(
    url: str, queue: str, seconds: float, admin: Callable[[float], None] | None = None
) -> tuple[list[int], list[str]]:
    """CLAIMERS claimers for `seconds`, a monitor, and `admin(until)` beside them when given:
    (the most holders of one key seen in each snapshot, the claims that passed a limit)."""
    stop = threading.Event()
    seen: list[int] = []
    bad: list[str] = []
    errors: list[BaseException] = []
    until = time.monotonic() + seconds
    watcher = threading.Thread(target=monitor, args=(url, queue, stop, seen))
    threads = [
        threading.Thread(target=claimer, args=(url, queue, n, until, bad, errors))
        for n in range(CLAIMERS)
    ]
    if admin is not None:
        threads.append(threading.Thread(target=admin, args=(until,)))
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)
    stop.set()
    watcher.join()
    assert not errors, errors[0]
    return seen, bad


def started(url: str, queue: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = %s AND attempt > 0", [queue]
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_mixed_isolation_claimers_with_expiry_cancel_retry_never_pass_a_key_limit_of_2(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('mixed', 2)")
    enqueue_mixed(url, "mixed", random.Random(1))
    seen, bad = run_race(url, "mixed", 8.0)
    assert not bad, bad[:5]
    assert max(seen) == 2, f"at most {max(seen)} holders of one key were seen; the limit is 2"
    assert started(url, "mixed") > 100


def test_a_limit_set_first_then_moved_while_claims_are_in_flight_is_never_passed(
    make_database: MakeDatabase,
) -> None:
    """No limit at first; while claimers of every isolation level claim, an admin sets a
    first limit (each claim waits for it or raises 40001), then lowers, raises, clears and
    sets it again."""
    url = make_database(deploy=True)
    enqueue_mixed(url, "moving", random.Random(2))

    def admin(until: float) -> None:
        limits = [1, 3, None, 2, 1, None, 1]
        with psycopg.connect(url, autocommit=True) as conn:
            time.sleep(0.3)
            n = 0
            while time.monotonic() < until:
                conn.execute(
                    "SELECT taskboard.set_key_limit('moving', %s)", [limits[n % len(limits)]]
                )
                n += 1
                time.sleep(0.2)

    _, bad = run_race(url, "moving", 8.0, admin)
    assert not bad, bad[:5]
    assert started(url, "moving") > 100


def test_a_queue_limit_and_a_key_limit_together_are_both_kept(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('both', 2)")
        conn.execute("SELECT taskboard.set_queue_limit('both', 5)")
    enqueue_mixed(url, "both", random.Random(3))
    most_running: list[int] = []

    def admin(until: float) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while time.monotonic() < until:
                row = conn.execute(
                    "SELECT count(*) FROM taskboard.jobs WHERE queue = 'both'"
                    " AND (state = 'running' OR held_until > clock_timestamp())"
                ).fetchone()
                assert row is not None
                most_running.append(int(row[0]))
                time.sleep(0.002)

    seen, bad = run_race(url, "both", 6.0, admin)
    assert not bad, bad[:5]
    assert max(seen) == 2
    assert max(most_running) == 5


# -- the controls: the same race against broken claims fails ------------------------------

PICK_KEYED = "taskboard.pick_keyed(text,timestamptz,integer,text[],integer,integer,interval,boolean,bigint[])"
FULL_KEYS = "taskboard.full_keys(text,integer,timestamptz)"
# Each mutant: the functions of claim it edits, and how.
MUTANTS = {
    # Holders counted among running jobs only: a cancelled job's live lease forgotten.
    "running_only": [
        (
            FULL_KEYS,
            "(h.state = 'running' OR h.held_until > full_keys.clock)",
            "h.state = 'running'",
        ),
        (
            PICK_KEYED,
            "(h.state = 'running' OR h.held_until > pick_keyed.clock)",
            "h.state = 'running'",
        ),
    ],
    # A key's room is the limit, its holders not subtracted (full keys still left out).
    "room_without_holders": [
        (
            PICK_KEYED,
            "n.nth <= pick_keyed.max_running_per_key - (",
            "n.nth <= pick_keyed.max_running_per_key - 0 * (",
        )
    ],
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_race_catches_a_broken_claim(make_database: MakeDatabase, mutant: str) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        for function, old, new in MUTANTS[mutant]:
            row = conn.execute("SELECT pg_get_functiondef(%s::regprocedure)", [function]).fetchone()
            assert row is not None
            source = str(row[0])
            assert old in source, old
            conn.execute(source.replace(old, new))
        conn.execute("SELECT taskboard.set_key_limit('mixed', 2)")
    enqueue_mixed(url, "mixed", random.Random(1))
    seen, bad = run_race(url, "mixed", 6.0)
    assert bad, "no claim passed the limit"
    assert max(seen) > 2
