"""One worker's renew_many and complete_many while another session takes its jobs.

Real sessions, each call started in a thread of its own and let go only once the
server shows it waiting on the lock this test means it to wait on (pg_stat_activity
and pg_blocking_pids, never a sleep's length).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect, expire, value

WORKER = "taskboard_worker"
ADMIN = "taskboard_admin"
RENEW_MANY = "SELECT job_id, lease_expires_at FROM taskboard.renew_many(%s::bigint[], %s::uuid[])"
COMPLETE_MANY = "SELECT job_id, completed FROM taskboard.complete_many(%s::bigint[], %s::uuid[])"


def claim_all(url: str, queue: str, n: int) -> list[tuple[int, Any]]:
    with connect(url, "taskboard_producer") as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[%s]), queue => %s)",
            [n, queue],
        )
    with connect(url, WORKER) as worker:
        rows = worker.execute(
            "SELECT job_id, token FROM taskboard.claim(%s, 'w1', %s)", [queue, n]
        ).fetchall()
    return sorted((r[0], r[1]) for r in rows)


def until(check: Callable[[], bool], what: str) -> None:
    for _ in range(400):
        if check():
            return
        threading.Event().wait(0.025)
    raise AssertionError(f"never: {what}")


def blocked_by(watcher: psycopg.Connection, pid: int) -> list[int]:
    return list(value(watcher, "SELECT pg_blocking_pids(%s)", [pid]))


@pytest.mark.parametrize("taker", ["reclaim", "cancel"])
def test_a_worker_renewing_and_completing_while_its_job_is_taken_does_not_deadlock(
    make_database: MakeDatabase, taker: str
) -> None:
    """The renewal waits for a job another session is taking (x), then for a row someone
    else holds (z); meanwhile the completion of x and y runs. With FOR UPDATE in the
    renewal, the completion's refusal of x (its history line takes FOR KEY SHARE on x)
    waited for the renewal, which then waited for the completion's y: a deadlock."""
    url = make_database(deploy=True)
    (x, tx), (z, tz), (y, ty) = claim_all(url, "dl", 3)
    if taker == "reclaim":
        expire(url, x)
    with (
        connect(url, WORKER if taker == "reclaim" else ADMIN, autocommit=False) as taking,
        psycopg.connect(url) as holding_z,
        connect(url, WORKER) as renewer,
        connect(url, WORKER) as completer,
        psycopg.connect(url, autocommit=True) as watcher,
        ThreadPoolExecutor(2) as pool,
    ):
        if taker == "reclaim":
            got = taking.execute("SELECT job_id FROM taskboard.claim('dl', 'w2')").fetchall()
            assert got == [(x,)]
        else:
            assert taking.execute("SELECT taskboard.cancel(%s)", [x]).fetchone() == (True,)
        holding_z.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR UPDATE", [z])
        taking_pid, holding_pid = taking.info.backend_pid, holding_z.info.backend_pid
        renewer_pid, completer_pid = renewer.info.backend_pid, completer.info.backend_pid

        renewed: Future[list[Any]] = pool.submit(
            lambda: renewer.execute(RENEW_MANY, [[x, z, y], [tx, tz, ty]]).fetchall()
        )
        until(lambda: blocked_by(watcher, renewer_pid) == [taking_pid], "renew_many waits for x")
        taking.commit()
        until(lambda: blocked_by(watcher, renewer_pid) == [holding_pid], "renew_many waits for z")

        completed: Future[list[Any]] = pool.submit(
            lambda: completer.execute(COMPLETE_MANY, [[x, y], [tx, ty]]).fetchall()
        )
        until(
            lambda: completed.done() or bool(blocked_by(watcher, completer_pid)),
            "complete_many ends or waits",
        )
        holding_z.commit()
        renewals = dict(renewed.result(timeout=30))
        answers = dict(completed.result(timeout=30))

    assert answers == {x: False, y: True}, "x is taken: refused; y completed"
    assert renewals[x] is None and renewals[z] is not None, "x refused, z renewed"
    with psycopg.connect(url, autocommit=True) as owner:
        kinds = [
            r[0]
            for r in owner.execute(
                "SELECT kind FROM taskboard.job_events WHERE job_id = %s ORDER BY id", [x]
            ).fetchall()
        ]
    assert kinds.count("refused_complete") == 1, kinds


def test_the_same_holder_completing_again_while_its_first_call_commits_is_answered_true(
    make_database: MakeDatabase,
) -> None:
    """A worker sends complete_many again (a retry after a lost answer) while the first
    call's transaction still holds the rows: the second waits, then finds the jobs
    succeeded by its own tokens, and says so."""
    url = make_database(deploy=True)
    jobs = claim_all(url, "again", 2)
    ids, tokens = [j for j, _ in jobs], [t for _, t in jobs]
    with (
        connect(url, WORKER, autocommit=False) as first,
        connect(url, WORKER) as second,
        psycopg.connect(url, autocommit=True) as watcher,
        ThreadPoolExecutor(1) as pool,
    ):
        assert dict(first.execute(COMPLETE_MANY, [ids, tokens]).fetchall()) == dict.fromkeys(
            ids, True
        )
        again: Future[list[Any]] = pool.submit(
            lambda: second.execute(COMPLETE_MANY, [ids, tokens]).fetchall()
        )
        first_pid, second_pid = first.info.backend_pid, second.info.backend_pid
        until(lambda: blocked_by(watcher, second_pid) == [first_pid], "the second call waits")
        first.commit()
        assert dict(again.result(timeout=30)) == dict.fromkeys(ids, True)


def test_a_worker_completing_jobs_claimed_out_of_id_order_while_renewing_does_not_deadlock(
    make_database: MakeDatabase,
) -> None:
    """Jobs b and c (higher priority) are claimed before a, so their rows lie in the
    table in the order b, c, a. The renewal of a, b and c locks a, then waits for b,
    which another session holds; meanwhile the completion of a and c runs. Had the
    completion written c (the table's order) before a, it would wait for a while
    holding c, which the renewal wants next: a deadlock. Written in job_id order, it
    waits for a holding nothing, and both calls end."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_producer") as producer:
        for priority in (0, 1, 1):
            producer.execute(
                "SELECT taskboard.enqueue('t', '{}', queue => 'order', priority => %s)", [priority]
            )
    with connect(url, WORKER) as worker:
        rows = worker.execute(
            "SELECT job_id, token FROM taskboard.claim('order', 'w1', 2)"
        ).fetchall()
        rows += worker.execute(
            "SELECT job_id, token FROM taskboard.claim('order', 'w1')"
        ).fetchall()
    (a, ta), (b, tb), (c, tc) = sorted((r[0], r[1]) for r in rows)
    with psycopg.connect(url, autocommit=True) as owner:
        in_table = [r[0] for r in owner.execute("SELECT id FROM taskboard.jobs ORDER BY ctid")]
    assert in_table == [b, c, a], "the case needs the table's order to differ from job_id order"
    with (
        psycopg.connect(url) as holding_b,
        connect(url, WORKER) as renewer,
        connect(url, WORKER) as completer,
        psycopg.connect(url, autocommit=True) as watcher,
        ThreadPoolExecutor(2) as pool,
    ):
        holding_b.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR NO KEY UPDATE", [b])
        holding_pid = holding_b.info.backend_pid
        renewer_pid, completer_pid = renewer.info.backend_pid, completer.info.backend_pid
        renewed: Future[list[Any]] = pool.submit(
            lambda: renewer.execute(RENEW_MANY, [[a, b, c], [ta, tb, tc]]).fetchall()
        )
        until(lambda: blocked_by(watcher, renewer_pid) == [holding_pid], "renew_many waits for b")
        completed: Future[list[Any]] = pool.submit(
            lambda: completer.execute(COMPLETE_MANY, [[a, c], [ta, tc]]).fetchall()
        )
        until(
            lambda: blocked_by(watcher, completer_pid) == [renewer_pid],
            "complete_many waits for a, which the renewal holds",
        )
        holding_b.commit()
        renewals = dict(renewed.result(timeout=30))
        answers = dict(completed.result(timeout=30))

    assert answers == {a: True, c: True}
    assert all(renewals[j] is not None for j in (a, b, c)), renewals
