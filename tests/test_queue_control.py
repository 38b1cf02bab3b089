"""Queue control under real concurrency: many sessions claiming at once never run more
jobs of a limited queue than its limit, and a paused queue hands out nothing while its
running jobs renew and complete."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from conftest import MakeDatabase

CLAIMERS = 8
JOBS = 120


def running(url: str, queue: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = %s AND state = 'running'", [queue]
        ).fetchone()
    assert row is not None
    return int(row[0])


def enqueue(url: str, queue: str, jobs: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s)",
            [jobs, queue],
        )


def race(url: str, queue: str, check: Callable[[int], None]) -> list[int]:
    """CLAIMERS sessions claim batches of 1-5 from `queue` in their own transactions until it
    is drained, holding each job a little before completing it; after every claim a count of
    the queue's running jobs goes to `check`. Returns every count seen."""
    seen: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def claimer(n: int) -> None:
        rng = random.Random(n)
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                idle_since = time.monotonic()
                while time.monotonic() - idle_since < 1.5:
                    with conn.transaction():
                        rows = conn.execute(
                            "SELECT job_id, token FROM taskboard.claim(%s, %s, %s, '30s')",
                            [queue, f"w{n}", rng.randint(1, 5)],
                        ).fetchall()
                    count = running(url, queue)
                    with lock:
                        seen.append(count)
                    check(count)
                    if not rows:
                        time.sleep(0.005)
                        continue
                    idle_since = time.monotonic()
                    time.sleep(rng.uniform(0, 0.01))
                    for job_id, token in rows:
                        done = conn.execute(
                            "SELECT taskboard.complete(%s, %s)", [job_id, token]
                        ).fetchone()
                        assert done == (True,)
        except (AssertionError, psycopg.Error) as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[0]
    return seen


def test_concurrent_claimers_never_pass_a_queue_limit(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    enqueue(url, "limited", JOBS)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_queue_limit('limited', 3)")

    def at_most_three(count: int) -> None:
        assert count <= 3, f"{count} jobs of a queue limited to 3 were running"

    seen = race(url, "limited", at_most_three)
    assert max(seen) == 3, "the limit was never reached: the race proved nothing"
    with psycopg.connect(url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = 'limited' AND state <> 'succeeded'"
        ).fetchone()
    assert left == (0,), "jobs were left behind"


def test_the_same_race_without_a_limit_runs_more_at_once(make_database: MakeDatabase) -> None:
    """The control: the check above can fail, and would without the limit."""
    url = make_database(deploy=True)
    enqueue(url, "free", JOBS)
    seen = race(url, "free", lambda count: None)
    assert max(seen) > 3


def test_a_paused_queue_hands_out_nothing_while_its_running_jobs_carry_on(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    enqueue(url, "paused", 20)
    held: list[Any] = []
    with psycopg.connect(url, autocommit=True) as conn:
        held = conn.execute(
            "SELECT job_id, token FROM taskboard.claim('paused', 'w', 5, '30s')"
        ).fetchall()
        assert conn.execute("SELECT taskboard.pause('paused')").fetchone() == (True,)

    handed_out: list[int] = []

    def claimer(n: int) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            for _ in range(50):
                rows = conn.execute(
                    "SELECT job_id FROM taskboard.claim('paused', %s, 5, '30s')", [f"w{n}"]
                ).fetchall()
                handed_out.extend(r[0] for r in rows)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    with psycopg.connect(url, autocommit=True) as conn:
        for job_id, token in held:
            renewed = conn.execute("SELECT taskboard.renew(%s, %s)", [job_id, token]).fetchone()
            assert renewed is not None and renewed[0] is not None
        for job_id, token in held:
            done = conn.execute("SELECT taskboard.complete(%s, %s)", [job_id, token])
            assert done.fetchone() == (True,)
    for thread in threads:
        thread.join(timeout=60)
    assert handed_out == [], "a paused queue handed out jobs"

    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT taskboard.resume('paused')").fetchone() == (True,)
        rows = conn.execute("SELECT job_id FROM taskboard.claim('paused', 'w', 100, '30s')")
        assert len(rows.fetchall()) == 15
