"""A first queue limit counts the claims still in flight: set while a claim's transaction
is open, it waits for that claim, and a claim after it counts the jobs that claim started."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect


def running(url: str, queue: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = %s AND state = 'running'", [queue]
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_first_limit_counts_a_claim_in_flight(make_database: MakeDatabase) -> None:
    """Worker A claims 6 jobs of an unlimited queue in an open transaction; the admin sets
    a first limit of 2; worker C claims. C must count A's 6 and start nothing."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[10]), 'fl')"
        )
    outcome: dict[str, object] = {}

    with (
        connect(url, "taskboard_worker", autocommit=False) as a,
        connect(url, "taskboard_admin") as admin,
        connect(url, "taskboard_worker") as c,
    ):
        assert len(a.execute("SELECT * FROM taskboard.claim('fl', 'a', 6)").fetchall()) == 6

        def set_limit() -> None:
            outcome["limit"] = admin.execute("SELECT taskboard.set_queue_limit('fl', 2)").fetchone()
            outcome["limit_at"] = time.monotonic()

        def claim() -> None:
            outcome["claimed"] = c.execute("SELECT * FROM taskboard.claim('fl', 'c')").fetchall()

        setter = threading.Thread(target=set_limit)
        setter.start()
        time.sleep(0.5)
        claimer = threading.Thread(target=claim)
        claimer.start()
        time.sleep(0.5)
        committed_at = time.monotonic()
        a.commit()
        setter.join(timeout=30)
        claimer.join(timeout=30)

    assert outcome["limit"] == (True,)
    assert outcome["claimed"] == [], "a claim after the first limit started a job beside A's 6"
    assert running(url, "fl") == 6
    limit_at = outcome["limit_at"]
    assert isinstance(limit_at, float) and limit_at >= committed_at, (
        "the first limit did not wait for the claim in flight"
    )


def test_a_limit_changed_or_set_with_no_claim_in_flight_does_not_wait(
    make_database: MakeDatabase,
) -> None:
    """Only claim transactions still open are waited for: with none, a first limit, a
    change and a removal return at once, and claims go on under the limit."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin, connect(url, "taskboard_worker") as w:
        admin.execute("SELECT taskboard.enqueue('t', queue => 'fl2')")
        assert len(w.execute("SELECT * FROM taskboard.claim('fl2', 'w')").fetchall()) == 1
        for limit in (1, 3, None, 1):
            started = time.monotonic()
            admin.execute("SELECT taskboard.set_queue_limit('fl2', %s)", [limit])
            assert time.monotonic() - started < 2
        admin.execute("SELECT taskboard.enqueue('t', queue => 'fl2')")
        assert w.execute("SELECT * FROM taskboard.claim('fl2', 'w')").fetchall() == []


def test_a_repeatable_read_claim_that_waited_for_a_first_limit_raises_40001(
    make_database: MakeDatabase,
) -> None:
    """A claim whose snapshot predates the first limit it waited for cannot see it: it
    raises 40001 (the driver claims again) rather than start a job beside A's."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[10]), 'rr')"
        )
    outcome: list[object] = []
    with (
        connect(url, "taskboard_worker", autocommit=False) as a,
        connect(url, "taskboard_admin") as admin,
        connect(url, "taskboard_worker") as c,
    ):
        c.execute("SET default_transaction_isolation = 'repeatable read'")
        assert len(a.execute("SELECT * FROM taskboard.claim('rr', 'a', 6)").fetchall()) == 6

        def claim() -> None:
            try:
                outcome.append(c.execute("SELECT * FROM taskboard.claim('rr', 'c')").fetchall())
            except psycopg.Error as exc:
                outcome.append(exc)

        setter = threading.Thread(
            target=lambda: admin.execute("SELECT taskboard.set_queue_limit('rr', 2)")
        )
        setter.start()
        time.sleep(0.5)
        claimer = threading.Thread(target=claim)
        claimer.start()
        time.sleep(0.5)
        a.commit()
        setter.join(timeout=30)
        claimer.join(timeout=30)
    assert running(url, "rr") == 6
    assert len(outcome) == 1
    assert isinstance(outcome[0], psycopg.Error) and outcome[0].sqlstate == "40001", outcome


def test_a_repeatable_read_claim_whose_snapshot_predates_a_first_limit_raises_40001(
    make_database: MakeDatabase,
) -> None:
    """A claim in REPEATABLE READ whose snapshot was taken before a first limit committed
    never waited for it and cannot see it: it raises 40001 rather than pass the limit."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[3]), 'lq')"
        )
    with (
        connect(url, "taskboard_worker", autocommit=False) as a,
        connect(url, "taskboard_admin") as admin,
    ):
        a.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        a.execute("SELECT 1")  # the snapshot
        admin.execute("SELECT taskboard.set_queue_limit('lq', 1)")
        with pytest.raises(psycopg.errors.SerializationFailure):
            a.execute("SELECT * FROM taskboard.claim('lq', 'a', 2, '10 minutes')")
        a.rollback()
        # Claimed again in a new transaction, it sees the limit.
        assert len(a.execute("SELECT * FROM taskboard.claim('lq', 'a', 2)").fetchall()) == 1
        a.commit()
    assert running(url, "lq") == 1
