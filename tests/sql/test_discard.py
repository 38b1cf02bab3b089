"""A discarding queue (taskboard.set_queue_discard) against other transactions: a
completion never waits for a producer naming its job in depends_on (the job is then
kept, and the dependent runs), a producer that names the job after the completion's
lock waits for it and is told the job does not exist, no dependent is ever left
waiting for good, a completion outside READ COMMITTED keeps the job, and a worker's
renewer and completer racing over a batch never deadlock."""

from __future__ import annotations

import json
import threading
from typing import Any

import psycopg
import pytest

from taskboard import InvalidArgument, SyncContext, Taskboard, load_settings
from taskboard.testing import run_until_empty
from tests.sql.test_dependency_locks import claim, enqueue, impatient, open_enqueue, state
from tests.support.cli import error_line, run
from tests.support.database import (
    MakeDatabase,
    connect,
    expire,
    settle_checks,
    stuck_waiting,
    value,
)

Conn = psycopg.Connection[Any]


def discarding(url: str, queue: str) -> None:
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.set_queue_discard(%s, true)", [queue]) is True


def exists(url: str, job_id: int) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        return bool(
            value(conn, "SELECT EXISTS (SELECT FROM taskboard.jobs WHERE id = %s)", [job_id])
        )


def test_an_open_enqueue_naming_the_job_stalls_no_completion_and_keeps_it(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    discarding(url, "d")
    with (
        impatient(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as worker,
    ):
        a, b = enqueue(producer, "d"), enqueue(producer, "d")
        tokens = claim(worker, "d")
        with open_enqueue(url, "kids", [a]) as dependent:
            answers = worker.execute(
                "SELECT job_id, completed FROM taskboard.complete_many(%s::bigint[], %s::uuid[])",
                [[a, b], [tokens[a], tokens[b]]],
            ).fetchall()
            assert answers == [(a, True), (b, True)]
        assert state(url, a) == "succeeded"  # held by the producer: kept, for prune
        assert not exists(url, b)
        settle_checks(url)
        assert state(url, dependent) == "queued"
        assert stuck_waiting(url) == []


def test_an_enqueue_after_the_completions_lock_waits_and_finds_no_job(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    discarding(url, "d")
    worker = connect(url, "taskboard_worker", autocommit=False)
    producer = connect(url, "taskboard_producer")
    try:
        a = enqueue(producer, "d")
        tokens = claim(worker, "d")
        worker.commit()
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]]) is True
        outcome: list[BaseException | int] = []

        def produce() -> None:
            try:
                outcome.append(enqueue(producer, "kids", [a]))
            except psycopg.Error as exc:
                outcome.append(exc)

        thread = threading.Thread(target=produce)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive(), "the enqueue waits for the completion's transaction"
        worker.commit()
        thread.join(10)
        assert len(outcome) == 1
        error = outcome[0]
        assert isinstance(error, psycopg.errors.InvalidParameterValue)
        assert f"depends_on names job {a}, which does not exist" in str(error)
    finally:
        worker.close()
        producer.close()
    assert not exists(url, a)
    assert stuck_waiting(url) == []


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_completion_outside_read_committed_keeps_the_job(
    make_database: MakeDatabase, isolation: str
) -> None:
    url = make_database(deploy=True)
    discarding(url, "d")
    with (
        connect(url, "taskboard_producer") as producer,
        connect(url, "taskboard_worker", autocommit=False) as worker,
    ):
        a = enqueue(producer, "d")
        tokens = claim(worker, "d")
        worker.commit()
        worker.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]]) is True
        worker.commit()
    assert state(url, a) == "succeeded"


def renew_after(
    conn: Conn,
    barrier: threading.Barrier,
    ids: list[int],
    tokens: dict[int, str],
    errors: list[BaseException],
) -> None:
    """renew_many of `ids` on `conn` once `barrier` lets it go; an error goes to `errors`."""
    try:
        barrier.wait()
        conn.execute(
            "SELECT count(*) FROM taskboard.renew_many(%s::bigint[], %s::uuid[])",
            [ids, [tokens[i] for i in ids]],
        )
    except psycopg.Error as exc:
        errors.append(exc)


def test_a_renewer_and_a_completer_over_one_batch_never_deadlock(
    make_database: MakeDatabase,
) -> None:
    """Half the batch in a discarding queue, half kept, in alternating ids: the
    completer's locks and the renewer's follow one order, whatever the split."""
    url = make_database(deploy=True)
    discarding(url, "d")
    with (
        connect(url, "taskboard_producer") as producer,
        connect(url, "taskboard_worker") as renewer,
        connect(url, "taskboard_worker") as completer,
    ):
        for _ in range(40):
            for _ in range(8):
                enqueue(producer, "d")
                enqueue(producer, "k")
            tokens = {**claim(completer, "d"), **claim(completer, "k")}
            ids = sorted(tokens)
            order = list(reversed(ids))
            barrier = threading.Barrier(2)
            errors: list[BaseException] = []
            thread = threading.Thread(
                target=renew_after, args=(renewer, barrier, order, tokens, errors)
            )
            thread.start()
            barrier.wait()
            answers = completer.execute(
                "SELECT completed FROM taskboard.complete_many(%s::bigint[], %s::uuid[])",
                [ids, [tokens[i] for i in ids]],
            ).fetchall()
            thread.join(10)
            assert errors == []
            assert answers == [(True,)] * len(ids)
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT count(*) FROM taskboard.jobs WHERE queue = 'd'") == 0
        assert value(conn, "SELECT count(*) FROM taskboard.jobs WHERE queue = 'k'") == 320


def test_the_app_and_the_cli_set_it_and_a_worker_leaves_nothing(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url))
    ran: list[int] = []

    @app.task("note", queue="d")
    def note(ctx: SyncContext, payload: Any) -> int:
        ran.append(payload["n"])
        return int(payload["n"])

    try:
        assert app.set_queue_discard("d", True) is True
        assert app.set_queue_discard("d", True) is False
        with pytest.raises(InvalidArgument, match="discard must be True or False"):
            app.set_queue_discard("d", "yes")  # type: ignore[arg-type]
        for n in range(5):
            app.enqueue("note", {"n": n})
        outcomes = run_until_empty(app)
        assert sorted(ran) == [0, 1, 2, 3, 4]
        assert outcomes == []  # get_job finds none of them: they were deleted
    finally:
        app.close()
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT count(*) FROM taskboard.jobs") == 0

    shown = run(url, "discard", "d", "off", "--json")
    assert json.loads(shown.stdout) == {"queue": "d", "discard": False, "changed": True}
    assert run(url, "discard", "d", "on").stdout.strip() == 'queue "d": a completed job is deleted'
    assert run(url, "discard", "d", "on").stdout.strip() == (
        'queue "d": a completed job is deleted (unchanged)'
    )
    refused = run(url, "discard", "d", "maybe")
    assert refused.returncode == 2
    assert "invalid choice: 'maybe'" in error_line(refused)


def test_workers_whose_leases_crossed_refuse_each_others_deleted_job_without_waiting(
    make_database: MakeDatabase,
) -> None:
    """A holds j1, whose lease before was B's; B holds j2, whose lease before was A's.
    Each deletes its own job in an open transaction, then presents its stale token for
    the other's: the refusal's history line would wait for the other's delete, each
    for the other, and one of them would be rolled back as a deadlock."""
    url = make_database(deploy=True)
    discarding(url, "d")
    with (
        connect(url, "taskboard_producer") as producer,
        impatient(url, "taskboard_worker") as claimer,
    ):
        j1 = enqueue(producer, "d")
        b1 = claim(claimer, "d")[j1]
        j2 = enqueue(producer, "d")
        a2 = claim(claimer, "d")[j2]
        expire(url, j1)
        expire(url, j2)
        a1, b2 = claim(claimer, "d", 1)[j1], claim(claimer, "d", 1)[j2]
    a = connect(url, "taskboard_worker", autocommit=False)
    b = connect(url, "taskboard_worker", autocommit=False)
    try:
        for conn in (a, b):
            conn.execute("SET lock_timeout = '2s'")
        assert value(a, "SELECT taskboard.complete(%s, %s)", [j1, a1]) is True
        assert value(b, "SELECT taskboard.complete(%s, %s)", [j2, b2]) is True
        assert value(a, "SELECT taskboard.complete(%s, %s)", [j2, a2]) is False
        assert value(b, "SELECT taskboard.complete(%s, %s)", [j1, b1]) is False
        a.commit()
        b.commit()
    finally:
        a.close()
        b.close()
    assert not exists(url, j1) and not exists(url, j2)
