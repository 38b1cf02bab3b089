"""A queue's limit per concurrency key under real concurrency: many sessions claiming at
once never let more jobs of one key run than the limit, and jobs of the other keys keep
running beside a full one."""

from __future__ import annotations

import random
import threading
import time

import psycopg

from tests.support.database import MakeDatabase

CLAIMERS = 8
KEYS = 4
JOBS = 120


def enqueue_keyed(url: str, queue: str) -> None:
    keys = [f"k{n % KEYS}" for n in range(JOBS)]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s,"
            " concurrency_keys => %s)",
            [JOBS, queue, keys],
        )


def most_running_of_one_key(url: str, queue: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            """SELECT coalesce(max(n), 0) FROM (
                   SELECT count(*) AS n FROM taskboard.jobs
                    WHERE queue = %s AND state = 'running' GROUP BY concurrency_key) AS k""",
            [queue],
        ).fetchone()
    assert row is not None
    return int(row[0])


def race(url: str, queue: str) -> list[int]:
    """CLAIMERS sessions claim batches of 1-5 until the queue is drained, holding each job a
    little; after every claim the most running jobs of one key is recorded."""
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
                    most = most_running_of_one_key(url, queue)
                    with lock:
                        seen.append(most)
                    if not rows:
                        threading.Event().wait(0.005)
                        continue
                    idle_since = time.monotonic()
                    threading.Event().wait(rng.uniform(0, 0.01))
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


def left(url: str, queue: str) -> object:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = %s AND state <> 'succeeded'", [queue]
        ).fetchone()


def test_concurrent_claimers_never_run_more_of_one_key_than_its_limit(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    enqueue_keyed(url, "keyed")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('keyed', 1)")
    seen = race(url, "keyed")
    assert max(seen) == 1, f"{max(seen)} jobs of one key ran at once under a key limit of 1"
    assert left(url, "keyed") == (0,), "jobs were left behind"


def test_the_same_race_without_a_key_limit_runs_more_of_one_key(
    make_database: MakeDatabase,
) -> None:
    """The control: the check above can fail, and would without the key limit."""
    url = make_database(deploy=True)
    enqueue_keyed(url, "free")
    assert max(race(url, "free")) > 1
