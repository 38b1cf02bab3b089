"""Queue control under real concurrency: many sessions claiming at once never run more
jobs of a limited queue than its limit, and a paused queue hands out nothing while its
running jobs renew and complete."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from taskboard import InvalidArgument, Taskboard, load_settings
from taskboard_dev.server import as_user
from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase

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


# -- the driver and the command line -----------------------------------------------------


def test_the_app_pauses_limits_and_resumes(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url))
    try:
        assert app.pause("mail") is True
        assert app.pause("mail") is False
        assert app.set_queue_limit("mail", 4) is True
        assert app.set_queue_limit("mail", 4) is False
        with pytest.raises(InvalidArgument, match="max_running must be at least 1"):
            app.set_queue_limit("mail", 0)
        with pytest.raises(InvalidArgument, match="queue must not be NULL or empty"):
            app.pause("")
        assert app.resume("mail") is True
        assert app.set_queue_limit("mail", None) is True

        async def twins() -> tuple[bool, bool, bool]:
            try:
                return (
                    await app.apause("sms"),
                    await app.aset_queue_limit("sms", 2),
                    await app.aresume("sms"),
                )
            finally:
                await app.aclose()

        assert asyncio.run(twins()) == (True, True, True)
    finally:
        app.close()
    with psycopg.connect(url) as conn:
        settings = conn.execute(
            "SELECT queue, paused, max_running FROM taskboard.queues ORDER BY queue"
        ).fetchall()
    assert settings == [("mail", False, None), ("sms", False, 2)]


def test_queue_control_needs_the_admin_role(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    login = "qc_producer_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN IN ROLE taskboard_producer")
    try:
        done = run(as_user(url, login), "pause", "mail")
        assert done.returncode == 1
        assert error_line(done).endswith(f"GRANT taskboard_admin TO {login}")
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {login}")


def test_the_cli_pauses_limits_resumes_and_shows_it(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    enqueue(url, "mail", 3)
    assert run(url, "pause", "mail").stdout.strip() == 'queue "mail" paused'
    assert run(url, "pause", "mail").stdout.strip() == 'queue "mail" was already paused'
    limited = run(url, "limit", "mail", "2", "--json")
    assert json.loads(limited.stdout) == {"queue": "mail", "max_running": 2, "changed": True}

    status = run(url, "status").stdout.splitlines()
    assert status[0].split() == [
        "queue",
        "state",
        "jobs",
        "runnable",
        "oldest_run_at",
        "paused",
        "limit",
        "key",
        "limit",
        "rate",
        "limit",
    ]
    assert status[1].split()[:3] == ["mail", "queued", "3"] and status[1].split()[-2:] == [
        "yes",
        "2",
    ]

    assert run(url, "limit", "mail", "none").stdout.strip() == 'queue "mail": no limit'
    assert run(url, "resume", "mail").stdout.strip() == 'queue "mail" resumed'
    assert run(url, "resume", "mail").stdout.strip() == 'queue "mail" was not paused'


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["limit", "mail", "0"], "a limit must be at least 1, got 0: pause the queue to stop it"),
        (["limit", "mail", "many"], "'many' is not a whole number or none"),
        (["limit", "mail", "99999999999"], "a limit must be at most 2147483647, got 99999999999"),
        (["pause"], "the following arguments are required: QUEUE"),
        (["pause", "x" * 201], "queue must be at most 200 characters, got 201"),
    ],
)
def test_the_cli_refuses_bad_queue_control_in_one_line(
    make_database: MakeDatabase, args: list[str], says: str
) -> None:
    url = make_database(deploy=True)
    done = run(url, *args)
    assert done.returncode == 2
    assert says in error_line(done)


def test_a_repeatable_read_claimer_cannot_pass_a_queue_limit(make_database: MakeDatabase) -> None:
    """A claimer whose snapshot predates the claim it waited for must not count without it.

    In REPEATABLE READ (a role's or database's default_transaction_isolation
    is enough) the snapshot is taken when the statement starts, before claim
    waits for the queue's row: the running jobs counted after the wait would
    miss the claim that held the row, and a limit of 1 would run 2.
    """
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_queue_limit('rr', 1)")
        conn.execute("SELECT taskboard.enqueue('t', queue => 'rr')")
        # Not due yet for the first claimer; due, and first in order, for the second.
        conn.execute(
            "SELECT taskboard.enqueue('t', queue => 'rr', priority => 10,"
            " run_at => clock_timestamp() + interval '1 second')"
        )
    outcome: list[object] = []
    with psycopg.connect(url) as first, psycopg.connect(url, autocommit=True) as second:
        assert len(first.execute("SELECT * FROM taskboard.claim('rr', 'a')").fetchall()) == 1
        time.sleep(1.2)
        second.execute("SET default_transaction_isolation = 'repeatable read'")

        def claim() -> None:
            try:
                outcome.append(
                    second.execute("SELECT * FROM taskboard.claim('rr', 'b')").fetchall()
                )
            except psycopg.Error as exc:
                outcome.append(exc)

        thread = threading.Thread(target=claim)
        thread.start()
        time.sleep(0.5)  # the second claim waits for the queue's row
        first.commit()
        thread.join(timeout=30)
    assert running(url, "rr") <= 1, f"a queue limited to 1 runs {running(url, 'rr')}: {outcome}"
    assert len(outcome) == 1
    assert isinstance(outcome[0], psycopg.Error) and outcome[0].sqlstate == "40001", outcome
