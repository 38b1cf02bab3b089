"""Red team of the dependency checks (enqueue holds FOR KEY SHARE only, an end settles
what it sees, claim rechecks the rest), each test written as the contract asks: a
claim's recheck of a wide enqueue is bounded, an end that waited for a row lock reads
its edges after the lock, a dependent held by an open transaction holds up no other
job's settling, and claims outside READ COMMITTED leave the checks to those in it."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from tests.support.database import MakeDatabase, connect, stuck_waiting, value

Conn = psycopg.Connection[Any]
THREAD_JOIN_S = 120.0


def enqueue(conn: Conn, queue: str, depends_on: list[int] | None = None) -> int:
    row = conn.execute(
        "SELECT taskboard.enqueue('t', '{}', %s, depends_on => %s::bigint[])", [queue, depends_on]
    ).fetchone()
    assert row is not None
    return int(row[0])


def claim(conn: Conn, queue: str, batch: int = 1000) -> dict[int, str]:
    rows = conn.execute(
        "SELECT job_id, token::text FROM taskboard.claim(%s, 'w', %s, '1 hour')", [queue, batch]
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def bulk(producer: Conn, owner: Conn, queue: str, n: int) -> list[int]:
    """n queued jobs of `queue` (enqueue_many), their ids in order."""
    producer.execute(
        "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), %s)", [n, queue]
    )
    return [
        int(r[0])
        for r in owner.execute(
            "SELECT id FROM taskboard.jobs WHERE queue = %s ORDER BY id", [queue]
        ).fetchall()
    ]


def xmax(owner: Conn, job_id: int) -> str:
    return str(value(owner, "SELECT xmax::text FROM taskboard.jobs WHERE id = %s", [job_id]))


def wait_until_locked(owner: Conn, pid: int, thread: threading.Thread) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and thread.is_alive():
        row = owner.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid]
        ).fetchone()
        if row is not None and row[0] == "Lock":
            return
        time.sleep(0.0005)
    raise AssertionError("the session never waited for a lock")


def test_one_claim_rechecks_an_enqueue_of_the_most_dependencies_allowed(
    make_database: MakeDatabase,
) -> None:
    """depends_on names at most 10,000 jobs, and one claim (of any queue) works through
    the check of an enqueue naming that many: the check is a set difference of the
    jobs named and read, not a scan of one array per edge (which made one claim take
    50 s for 100,000)."""
    url = make_database(deploy=True)
    producer = connect(url, "taskboard_producer")
    worker = connect(url, "taskboard_worker")
    owner = psycopg.connect(url, autocommit=True)
    ids = bulk(producer, owner, "bulk", 10_001)
    try:
        enqueue(producer, "kids", ids)
    except psycopg.Error as exc:
        assert exc.sqlstate == "22023"
        assert "at most 10000 jobs, got 10001" in str(exc)
    else:
        raise AssertionError("an enqueue naming 10,001 jobs was accepted")
    kid = enqueue(producer, "kids", ids[:10_000])
    checks = "SELECT count(*) FROM taskboard.dependency_checks WHERE job_id = %s"
    assert value(owner, checks, [kid]) == 1
    assert claim(worker, "victim") == {}
    assert value(owner, checks, [kid]) == 0


def test_an_end_waiting_behind_a_recheck_leaves_no_dependent_waiting_for_good(
    make_database: MakeDatabase,
) -> None:
    """An end whose UPDATE waits for a row lock (here a session holding the job FOR
    SHARE, as a recheck in flight does) took its snapshot before the wait; meanwhile
    an enqueue of a dependent commits and a claim's recheck reads the job (FOR SHARE
    SKIP LOCKED, which a FOR SHARE does not block) as running and drops the
    dependent's check. The end reads the job's edges in a statement after its lock,
    so it sees the edge and settles it."""
    url = make_database(deploy=True)
    producer = connect(url, "taskboard_producer")
    worker = connect(url, "taskboard_worker")
    owner = psycopg.connect(url, autocommit=True)
    p = enqueue(producer, "work")
    token = claim(worker, "work")[p]
    holder = psycopg.connect(url, autocommit=False)
    holder.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR SHARE", [p])
    opener = connect(url, "taskboard_producer", autocommit=False)
    d = enqueue(opener, "kids", [p])  # left open
    w = connect(url, "taskboard_worker")
    w_pid = int(value(w, "SELECT pg_backend_pid()"))
    errors: list[BaseException] = []

    def complete() -> None:
        try:
            w.execute("SELECT taskboard.complete(%s, %s)", [p, token])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    done = threading.Thread(target=complete)
    done.start()
    wait_until_locked(owner, w_pid, done)  # its snapshot is taken, the edge not committed
    opener.commit()
    assert claim(worker, "none") == {}  # the recheck reads p running and drops d's check
    assert (
        value(owner, "SELECT count(*) FROM taskboard.dependency_checks WHERE job_id = %s", [d]) == 0
    )
    holder.rollback()
    done.join(THREAD_JOIN_S)
    assert not done.is_alive() and not errors, errors
    assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [p]) == "succeeded"
    assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [d]) == "queued"
    assert stuck_waiting(url) == []


def test_a_dependent_held_by_an_open_transaction_stalls_no_other_settle(
    make_database: MakeDatabase,
) -> None:
    """recheck_dependencies takes one 'dependency' row per call, the oldest. A row whose
    dependents another transaction holds (here a worker's complete of a second
    dependency left open) cannot be settled and is picked again by every claim, so
    no other job's left edges (a fan-out past 1000) are settled while that
    transaction stays open."""
    url = make_database(deploy=True)
    producer = connect(url, "taskboard_producer")
    worker = connect(url, "taskboard_worker")
    owner = psycopg.connect(url, autocommit=True)
    p1, q, p2 = enqueue(producer, "a"), enqueue(producer, "a"), enqueue(producer, "a")
    tokens = claim(worker, "a")
    enqueue(producer, "kids", [p1, q])  # a1: held by the open complete of q below
    fan = [
        int(r[0])
        for r in producer.execute(
            "SELECT taskboard.enqueue('t', '{}', 'fan', depends_on => ARRAY[%s]::bigint[])"
            "  FROM generate_series(1, 1001)",
            [p2],
        ).fetchall()
    ]
    for _ in range(3):
        claim(worker, "none")  # the enqueues' checks done
    held = connect(url, "taskboard_worker", autocommit=False)
    assert value(held, "SELECT taskboard.complete(%s, %s)", [q, tokens[q]]) is True  # holds a1
    try:
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [p1, tokens[p1]]) is True
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [p2, tokens[p2]]) is True
        for _ in range(20):
            claim(worker, "none")
        left = value(
            owner,
            "SELECT count(*) FROM taskboard.jobs WHERE id = ANY(%s) AND state = 'waiting'",
            [fan],
        )
        assert left == 0, f"{left} dependents of p2 still wait while a1 is held"
    finally:
        held.rollback()
        held.close()


def test_claims_in_repeatable_read_leave_the_checks_to_claims_in_read_committed(
    make_database: MakeDatabase,
) -> None:
    """recheck_dependencies does nothing outside READ COMMITTED (its reads need a
    statement's own snapshot): claims in REPEATABLE READ answer as usual and leave
    an edge an end could not see to the next claim in READ COMMITTED (the driver's
    worker claims in READ COMMITTED), which settles it."""
    url = make_database(deploy=True)
    producer = connect(url, "taskboard_producer")
    worker = connect(url, "taskboard_worker")
    owner = psycopg.connect(url, autocommit=True)
    p = enqueue(producer, "a")
    token = claim(worker, "a")[p]
    opener = connect(url, "taskboard_producer", autocommit=False)
    d = enqueue(opener, "kids", [p])
    assert value(worker, "SELECT taskboard.complete(%s, %s)", [p, token]) is True
    opener.commit()
    rr = connect(url, "taskboard_worker", autocommit=False)
    rr.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    rr.commit()
    for _ in range(5):
        rr.execute("SELECT count(*) FROM taskboard.claim('none', 'w')")
        rr.commit()
    assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [d]) == "waiting"
    assert claim(worker, "none") == {}
    assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [d]) == "queued"
