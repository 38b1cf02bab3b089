"""What an open transaction naming jobs in depends_on holds against others: nothing
their holders' renew, complete or fail, a claim or an admin's cancel waits for, one
step removed included. Each call below runs under a short lock_timeout: a wait for
the open transaction would raise 55P03 instead of answering. A dependent that runs
anyway beside a cancelled dependency is due no sooner than the lease the cancelled
job's holder was given."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from tests.support.database import MakeDatabase, connect, settle_checks, value

Conn = psycopg.Connection[Any]
LOCK_TIMEOUT = "2s"  # far longer than any of these calls takes without a wait


@contextmanager
def impatient(url: str, role: str) -> Iterator[Conn]:
    conn = connect(url, role)
    conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def open_enqueue(url: str, queue: str, depends_on: list[int]) -> Iterator[int]:
    """A producer's transaction that enqueues a job depending on `depends_on`, left open
    for the block, then committed."""
    producer = connect(url, "taskboard_producer", autocommit=False)
    try:
        row = producer.execute(
            "SELECT taskboard.enqueue('t', '{}', %s, depends_on => %s)", [queue, depends_on]
        ).fetchone()
        assert row is not None
        yield int(row[0])
        producer.commit()
    finally:
        producer.close()


def enqueue(conn: Conn, queue: str, depends_on: list[int] | None = None, **named: Any) -> int:
    extra = "".join(f", {k} => %({k})s" for k in named)
    row = conn.execute(
        f"SELECT taskboard.enqueue('t', '{{}}', %(q)s, depends_on => %(d)s::bigint[]{extra})",
        {"q": queue, "d": depends_on, **named},
    ).fetchone()
    assert row is not None
    return int(row[0])


def claim(conn: Conn, queue: str, batch: int = 1000, lease: str = "60 seconds") -> dict[int, str]:
    rows = conn.execute(
        "SELECT job_id, token::text FROM taskboard.claim(%s, 'w', %s, %s::interval)",
        [queue, batch, lease],
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def state(url: str, job_id: int) -> str:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]).fetchone()
    assert row is not None
    return str(row[0])


def test_an_open_enqueue_stalls_no_renew_complete_or_fail_of_what_it_names(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as worker,
    ):
        a, b = enqueue(producer, "held"), enqueue(producer, "held")
        tokens = claim(worker, "held")
        with open_enqueue(url, "held-kids", [a, b]) as dependent:
            for _ in range(3):
                assert value(worker, "SELECT taskboard.renew(%s, %s)", [a, tokens[a]]) is not None
                renewed = worker.execute(
                    "SELECT lease_expires_at FROM taskboard.renew_many(%s::bigint[], %s::uuid[])",
                    [[a, b], [tokens[a], tokens[b]]],
                ).fetchall()
                assert all(r[0] is not None for r in renewed)
            assert value(worker, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]]) is True
            assert (
                value(
                    worker, "SELECT taskboard.fail(%s, %s, 'boom', retry => false)", [b, tokens[b]]
                )
                == "dead"
            )
        # Its edges were not committed when a and b ended: a later claim settles them.
        settle_checks(url)
        assert state(url, dependent) == "cancelled"


def test_an_open_enqueue_naming_a_thousand_queued_jobs_freezes_no_claim_or_cancel(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as worker,
        impatient(url, "taskboard_admin") as admin,
    ):
        ids = [
            int(r[0])
            for r in producer.execute(
                "SELECT taskboard.enqueue('t', '{}', 'frozen') FROM generate_series(1, 1000)"
            ).fetchall()
        ]
        with open_enqueue(url, "frozen-kids", ids) as dependent:
            assert value(admin, "SELECT taskboard.cancel(%s)", [ids[0]]) is True
            assert sorted(claim(worker, "frozen")) == ids[1:]
        settle_checks(url)
        assert state(url, dependent) == "cancelled"  # ids[0] was cancelled


def test_an_open_enqueue_one_step_removed_stalls_nothing(make_database: MakeDatabase) -> None:
    """The enqueue depends on x, which waits for a running v: v's renew and complete
    answer, and v's completion releases x in its own transaction."""
    url = make_database(deploy=True)
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as worker,
    ):
        v = enqueue(producer, "chain")
        x = enqueue(producer, "chain-x", [v])
        tokens = claim(worker, "chain")
        with open_enqueue(url, "chain-y", [x]) as y:
            assert value(worker, "SELECT taskboard.renew(%s, %s)", [v, tokens[v]]) is not None
            assert value(worker, "SELECT taskboard.complete(%s, %s)", [v, tokens[v]]) is True
            assert state(url, x) == "queued"
        assert state(url, y) == "waiting"  # for x, queued now
        assert list(claim(worker, "chain-x")) == [x]


def test_a_handler_transaction_may_depend_on_its_own_job(make_database: MakeDatabase) -> None:
    """A holder's transaction enqueues a follow-up depending on its own job, as a
    transactional handler does on ctx.conn: renewals from another session go through
    meanwhile, and the completion in that transaction releases the follow-up."""
    url = make_database(deploy=True)
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as renewer,
    ):
        job_id = enqueue(producer, "own")
        tokens = claim(renewer, "own")
        handler = connect(url, "taskboard_worker", autocommit=False)
        try:
            follow_up = enqueue(handler, "own-next", [job_id])
            assert (
                value(renewer, "SELECT taskboard.renew(%s, %s)", [job_id, tokens[job_id]])
                is not None
            )
            assert (
                value(handler, "SELECT taskboard.complete(%s, %s)", [job_id, tokens[job_id]])
                is True
            )
            handler.commit()
        finally:
            handler.close()
        assert state(url, follow_up) == "queued"


def test_a_dependent_that_runs_anyway_waits_for_a_cancelled_dependencys_lease(
    make_database: MakeDatabase,
) -> None:
    """Cancelled under a live lease, the dependency's holder may act until its
    deadline: the dependent is due no sooner (as retry and dedupe keep it), and claim
    does not hand it out before."""
    url = make_database(deploy=True)
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as worker,
        impatient(url, "taskboard_admin") as admin,
    ):
        v = enqueue(producer, "anyway")
        tokens = claim(worker, "anyway", lease="10 minutes")
        after = enqueue(producer, "anyway-next", [v], on_dependency_failure="run")
        assert value(admin, "SELECT taskboard.cancel(%s)", [v]) is True
        with psycopg.connect(url, autocommit=True) as root:
            row = root.execute(
                "SELECT d.state, d.run_at >= v.held_until, v.held_until > clock_timestamp()"
                "  FROM taskboard.jobs AS d, taskboard.jobs AS v WHERE d.id = %s AND v.id = %s",
                [after, v],
            ).fetchone()
        assert row == ("queued", True, True)
        assert claim(worker, "anyway-next") == {}
        assert value(worker, "SELECT taskboard.renew(%s, %s)", [v, tokens[v]]) is None
