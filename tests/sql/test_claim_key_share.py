"""A job on which another open transaction holds FOR KEY SHARE is claimed, renewed and
completed as any other.

FOR KEY SHARE is what a foreign key's check takes on the row it references (a
dependency edge or a history line naming the job), and what a reader that only needs
the job to stay there takes. It conflicts with FOR UPDATE but not with FOR NO KEY
UPDATE: a claim that locked its candidates FOR UPDATE SKIP LOCKED skipped such a job,
so that a transaction left open by any caller that named it hid the job (and, naming
every queued id, the whole queue) from every claimer, each claim answering as if the
queue were empty. Each path of claim that locks jobs is taken here with the lock held:
the common path, a queue limit, a key limit, a rate per key, a reclaim, and a spent lease
to bury. A worker statement that would wait for the lock fails (lock_timeout),
and a claim that skips the job answers without it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect, expire, value

QUEUE = "shared"
WAIT_AT_MOST = "2s"  # a worker's statement that would wait for the lock fails instead

SETUPS = {
    "no limit": None,
    "queue limit": "SELECT taskboard.set_queue_limit(%s, 5)",
    "key limit": "SELECT taskboard.set_key_limit(%s, 1)",
    "rate per key": "SELECT taskboard.set_rate_limit(%s, 5, '1 hour', by_key => true)",
}


@contextmanager
def key_share(url: str, job_id: int, how: str) -> Iterator[psycopg.Connection[Any]]:
    """An open transaction holding FOR KEY SHARE on the job until the block ends: taken
    by a plain SELECT ... FOR KEY SHARE, or by the foreign key check of a dependency
    edge naming it, inserted as the owner and not yet committed."""
    with psycopg.connect(url) as holder:
        if how == "select":
            holder.execute("SELECT FROM taskboard.jobs WHERE id = %s FOR KEY SHARE", [job_id])
        else:
            other = value(holder, "SELECT taskboard.enqueue('t', '{}', 'elsewhere')")
            holder.execute(
                "INSERT INTO taskboard.job_dependencies (job_id, depends_on) VALUES (%s, %s)",
                [other, job_id],
            )
        yield holder
        holder.rollback()


def row_locked_by_key_share(watcher: psycopg.Connection[Any], job_id: int) -> bool:
    """Whether the job's row is locked FOR KEY SHARE by some transaction (pgrowlocks
    would say so too; the probe here: a FOR UPDATE NOWAIT fails, FOR NO KEY UPDATE
    NOWAIT does not)."""
    with watcher.transaction():
        try:
            with watcher.transaction():
                watcher.execute(
                    "SELECT FROM taskboard.jobs WHERE id = %s FOR UPDATE NOWAIT", [job_id]
                )
        except psycopg.errors.LockNotAvailable:
            pass
        else:
            return False
        watcher.execute(
            "SELECT FROM taskboard.jobs WHERE id = %s FOR NO KEY UPDATE NOWAIT", [job_id]
        )
        return True


def configure(owner: psycopg.Connection[Any], setup: str) -> None:
    """Give QUEUE the limit of `setup`, as the owner."""
    statement = SETUPS[setup]
    if statement is not None:
        owner.execute(statement, [QUEUE])


def worker_session(url: str) -> psycopg.Connection[Any]:
    worker = connect(url, "taskboard_worker")
    worker.execute(f"SET lock_timeout = '{WAIT_AT_MOST}'")
    return worker


@pytest.mark.parametrize("how", ["select", "dependency edge"])
@pytest.mark.parametrize("setup", SETUPS)
def test_a_job_under_key_share_is_claimed_renewed_and_completed(
    make_database: MakeDatabase, setup: str, how: str
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as owner, worker_session(url) as worker:
        configure(owner, setup)
        job_id = value(
            owner, "SELECT taskboard.enqueue('t', '{}', %s, concurrency_key => 'k')", [QUEUE]
        )
        with key_share(url, job_id, how):
            assert row_locked_by_key_share(owner, job_id)
            rows = worker.execute(
                "SELECT job_id, token, attempt FROM taskboard.claim(%s, 'w')", [QUEUE]
            ).fetchall()
            assert [(r[0], r[2]) for r in rows] == [(job_id, 1)], (
                f"{setup}: the claim took the job under FOR KEY SHARE"
            )
            token = rows[0][1]
            assert value(worker, "SELECT taskboard.renew(%s, %s)", [job_id, token]) is not None
            assert value(worker, "SELECT taskboard.complete(%s, %s)", [job_id, token]) is True
            assert row_locked_by_key_share(owner, job_id), "the lock was held throughout"
        assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]) == (
            "succeeded"
        )


@pytest.mark.parametrize("setup", SETUPS)
def test_an_expired_lease_under_key_share_is_reclaimed(
    make_database: MakeDatabase, setup: str
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as owner, worker_session(url) as worker:
        configure(owner, setup)
        job_id = value(
            owner, "SELECT taskboard.enqueue('t', '{}', %s, concurrency_key => 'k')", [QUEUE]
        )
        [(first,)] = worker.execute(
            "SELECT token FROM taskboard.claim(%s, 'w1')", [QUEUE]
        ).fetchall()
        expire(url, job_id)
        with key_share(url, job_id, "select"):
            rows = worker.execute(
                "SELECT job_id, token, attempt FROM taskboard.claim(%s, 'w2')", [QUEUE]
            ).fetchall()
            assert [(r[0], r[2]) for r in rows] == [(job_id, 2)], (
                f"{setup}: the reclaim took the job under FOR KEY SHARE"
            )
            token = rows[0][1]
            assert value(worker, "SELECT taskboard.complete(%s, %s)", [job_id, first]) is False
            assert value(worker, "SELECT taskboard.renew(%s, %s)", [job_id, token]) is not None
            assert value(worker, "SELECT taskboard.complete(%s, %s)", [job_id, token]) is True


@pytest.mark.parametrize("setup", SETUPS)
def test_a_spent_lease_under_key_share_is_buried(make_database: MakeDatabase, setup: str) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as owner, worker_session(url) as worker:
        configure(owner, setup)
        job_id = value(
            owner,
            "SELECT taskboard.enqueue('t', '{}', %s, max_attempts => 1, concurrency_key => 'k')",
            [QUEUE],
        )
        assert len(worker.execute("SELECT FROM taskboard.claim(%s, 'w1')", [QUEUE]).fetchall()) == 1
        expire(url, job_id)
        with key_share(url, job_id, "select"):
            assert worker.execute("SELECT FROM taskboard.claim(%s, 'w2')", [QUEUE]).fetchall() == []
            assert value(owner, "SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]) == (
                "dead"
            ), f"{setup}: the spent lease under FOR KEY SHARE was buried"
