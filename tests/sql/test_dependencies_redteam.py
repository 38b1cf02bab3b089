"""Dependencies (schema 0.5.0) pressed with real concurrent sessions at the places the
first race tests did not reach: a retry of a cancelled waiting job while its last
dependency completes, a claim that buries a spent lease while a dependent of it is
enqueued, cancels that cascade while other calls settle the same jobs, batches that
hold the rows of their jobs while they settle, and a completion releasing ten
thousand dependents.

Where a race needs one session to be at a given point while another commits, a third
session holds a row or a table for the time it takes to line them up (an enqueue or
a retry left open, a LOCK TABLE): it only widens a window that exists without it.
Since 0.6.0 an open enqueue or retry holds nothing a holder's write or an end waits
for: an end answers at once, skips a dependent another transaction holds, and what
it could not settle is settled by a later claim (settle_checks). Each test names
what the contract asks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect, settle_checks, stuck_waiting, value

LOCK_WAIT_S = 10.0  # how long a session may take to reach the lock it is expected to wait on
THREAD_JOIN_S = 60.0
FAN_OUT = 10_000  # dependents of one job
CAME_AND_WENT = 2_000  # jobs that came and went before the statistics were taken
WAITING_ROWS = """
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, attempt, max_attempts,
                            created_at, finished_at, dependencies_left)
SELECT 'old', 't', '{}', 'waiting', now(), 1, 5, now(), NULL, 1
  FROM pg_catalog.generate_series(1, %s)
"""  # waiting rows that make the statistics expect many waiting jobs

Conn = psycopg.Connection[Any]


def enqueue(conn: Conn, queue: str, depends_on: list[int] | None = None, **options: Any) -> int:
    named = "".join(f", {name} => %({name})s" for name in options)
    row = conn.execute(
        "SELECT taskboard.enqueue('t', '{}', %(queue)s, depends_on => %(deps)s::bigint[]"
        + named
        + ")",
        {"queue": queue, "deps": depends_on, **options},
    ).fetchone()
    assert row is not None
    return int(row[0])


def claim(conn: Conn, queue: str) -> dict[int, str]:
    rows = conn.execute(
        "SELECT job_id, token::text FROM taskboard.claim(%s, 'w', 1000)", [queue]
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def state(url: str, job_id: int) -> tuple[str, int | None, int]:
    """The job's state, its dependencies_left and the edges it still has."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT j.state, j.dependencies_left,"
            "       (SELECT count(*)::int FROM taskboard.job_dependencies AS d WHERE d.job_id = j.id)"
            "  FROM taskboard.jobs AS j WHERE j.id = %s",
            [job_id],
        ).fetchone()
    assert row is not None, job_id
    return str(row[0]), row[1], int(row[2])


def wait_for_lock(url: str, waiter: Conn) -> None:
    """Return once `waiter`'s backend waits for a lock (seen by the server's superuser)."""
    pid = waiter.info.backend_pid
    deadline = time.monotonic() + LOCK_WAIT_S
    with psycopg.connect(url, autocommit=True) as observer:
        while time.monotonic() < deadline:
            row = observer.execute(
                "SELECT wait_event_type = 'Lock' FROM pg_catalog.pg_stat_activity WHERE pid = %s",
                [pid],
            ).fetchone()
            if row is not None and row[0]:
                return
            time.sleep(0.02)
    raise AssertionError(f"backend {pid} never waited for a lock")


class Call:
    """A call made in a thread of its own: its answer, or the SQLSTATE it raised."""

    def __init__(self, work: Callable[[], object]) -> None:
        self.answer: object = None
        self.sqlstate: str | None = None
        self._thread = threading.Thread(target=self._run, args=(work,))
        self._thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            self.answer = work()
        except psycopg.Error as exc:
            self.sqlstate = exc.sqlstate

    def join(self) -> None:
        self._thread.join(THREAD_JOIN_S)
        assert not self._thread.is_alive(), "the call never returned"


def answered(call: Call, again: Callable[[], object]) -> object:
    """The call's answer; a call the server chose to break a deadlock (40P01), its
    transaction rolled back whole, is made again, as a worker sends an outcome again."""
    if call.sqlstate == "40P01":
        return again()
    assert call.sqlstate is None, call.sqlstate
    return call.answer


@contextmanager
def sessions(url: str, *roles: str) -> Iterator[list[Conn]]:
    conns = [connect(url, role) for role in roles]
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()


# -- retry against a completion -----------------------------------------------------------


@pytest.mark.parametrize(
    "isolation",
    [
        psycopg.IsolationLevel.READ_COMMITTED,
        psycopg.IsolationLevel.REPEATABLE_READ,
        psycopg.IsolationLevel.SERIALIZABLE,
    ],
    ids=["read-committed", "repeatable-read", "serializable"],
)
def test_a_retried_waiting_job_is_released_when_its_last_dependency_completes_meanwhile(
    make_database: MakeDatabase, isolation: psycopg.IsolationLevel
) -> None:
    """A retry left open holds the job's row, and nothing of its dependencies: a
    completion of one of them answers at once in every isolation level, skips the
    job it cannot lock, and a later claim settles it. The job is not left waiting for
    a dependency that succeeded."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker", "taskboard_admin") as (
        producer,
        worker,
        admin,
    ):
        a = enqueue(producer, "rt")
        b = enqueue(producer, "rt")
        job = enqueue(producer, "rt", [a, b])
        tokens = claim(worker, "rt")
        assert value(admin, "SELECT taskboard.cancel(%s)", [job]) is True

        with connect(url, "taskboard_admin", autocommit=False) as retrier:
            assert value(retrier, "SELECT taskboard.retry(%s)", [job]) is True
            with connect(url, "taskboard_worker") as completer:
                completer.isolation_level = isolation

                def complete_a() -> object:
                    with completer.transaction():
                        return value(completer, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]])

                done = Call(complete_a)
                done.join()  # while the retry is still open
                assert done.sqlstate is None and done.answer is True
            retrier.commit()
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [b, tokens[b]]) is True
        settle_checks(url)
        assert state(url, job) == ("queued", 0, 0), "its dependencies both succeeded"
    assert stuck_waiting(url) == []


# -- claim burying a spent lease against an enqueue -----------------------------------------


def test_a_claim_burying_a_spent_lease_settles_a_dependent_enqueued_since_it_began(
    make_database: MakeDatabase,
) -> None:
    """claim buries a spent lease and settles its dependents from the edges it sees: a
    dependent enqueued while the claim is held up after the burial (here by an owner's
    LOCK TABLE on the history, which the claim writes later) does not wait for the
    claim, reads the job still running, and is settled by a later claim once both have
    committed: cancelled, its dependency dead; none is left waiting for a dead job."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker", "taskboard_owner") as (
        producer,
        worker,
        owner,
    ):
        spent = enqueue(producer, "bury", max_attempts=1)
        assert list(claim(worker, "bury")) == [spent]
        owner.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [spent],
        )
        with connect(url, "taskboard_owner", autocommit=False) as holder:
            holder.execute("LOCK TABLE taskboard.job_events IN ACCESS EXCLUSIVE MODE")
            with connect(url, "taskboard_worker") as claimer:
                claiming = Call(lambda: claim(claimer, "bury"))
                wait_for_lock(url, claimer)
                enqueuing = Call(lambda: enqueue(producer, "bury", [spent]))
                enqueuing.join()  # while the claim is still held up
                holder.rollback()
                claiming.join()
        assert claiming.sqlstate is None and claiming.answer == {}
        assert enqueuing.sqlstate is None
        assert isinstance(enqueuing.answer, int)
        dependent = enqueuing.answer
        assert state(url, spent)[0] == "dead"
        settle_checks(url)
        assert state(url, dependent)[0] == "cancelled", (
            "its dependency ended dead: a later claim cancels it"
        )
    assert stuck_waiting(url) == []


# -- deadlocks ---------------------------------------------------------------------------


def hold_row(conn: Conn, job_id: int) -> None:
    """Lock a job's row as a write of it in flight does (an owner's session, until it
    commits or rolls back)."""
    conn.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR NO KEY UPDATE", [job_id])


def test_two_cancels_whose_cascades_cross_do_not_deadlock(make_database: MakeDatabase) -> None:
    """A cascade locks round by round: its second round's ids may be lower than ids the
    first round of another cascade holds. a and b are cancelled at once; x waits on a,
    y on x, z on x and b, w on a and z, while an enqueue depending on y is left open
    and another session holds y's row. Neither cancel waits, for the other or for y:
    each skips the rows it cannot lock, and later claims settle them; every
    dependent ends cancelled."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer") as (producer,):
        a = enqueue(producer, "cx")
        b = enqueue(producer, "cx")
        x = enqueue(producer, "cx", [a])
        y = enqueue(producer, "cx", [x])
        z = enqueue(producer, "cx", [x, b])
        w = enqueue(producer, "cx", [a, z])
        with (
            connect(url, "taskboard_producer", autocommit=False) as open_enqueue,
            connect(url, "taskboard_owner", autocommit=False) as holder,
            connect(url, "taskboard_admin") as first,
            connect(url, "taskboard_admin") as second,
        ):
            enqueue(open_enqueue, "cx", [y])
            hold_row(holder, y)
            cancel_a = Call(lambda: value(first, "SELECT taskboard.cancel(%s)", [a]))
            cancel_b = Call(lambda: value(second, "SELECT taskboard.cancel(%s)", [b]))
            cancel_a.join()  # while the enqueue and the holder are still open
            cancel_b.join()
            assert answered(cancel_a, lambda: None) is True
            assert answered(cancel_b, lambda: None) is True
            holder.commit()
            open_enqueue.commit()
        settle_checks(url)
        assert [state(url, j)[0] for j in (x, y, z, w)] == ["cancelled"] * 4
    assert stuck_waiting(url) == []


def test_a_completion_and_a_cancel_cascade_do_not_deadlock(make_database: MakeDatabase) -> None:
    """The completion of a settles its dependents p, r, q; the cancel of b settles m
    and q in its first round and p (a dependent of m) in its second. With r's row held
    by another session and an enqueue depending on r left open, neither call waits,
    for the other or for r; later claims settle what they skipped."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker") as (producer, worker):
        a = enqueue(producer, "cc")
        b = enqueue(producer, "cc")
        m = enqueue(producer, "cc", [b])
        p = enqueue(producer, "cc", [a, m])
        r = enqueue(producer, "cc", [a])
        q = enqueue(producer, "cc", [a, b])
        tokens = claim(worker, "cc")
        with (
            connect(url, "taskboard_producer", autocommit=False) as open_enqueue,
            connect(url, "taskboard_owner", autocommit=False) as holder,
            connect(url, "taskboard_worker") as completer,
            connect(url, "taskboard_admin") as canceller,
        ):
            enqueue(open_enqueue, "cc", [r])
            hold_row(holder, r)
            completing = Call(
                lambda: value(completer, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]])
            )
            cancelling = Call(lambda: value(canceller, "SELECT taskboard.cancel(%s)", [b]))
            completing.join()  # while the enqueue and the holder are still open
            cancelling.join()
            assert answered(completing, lambda: None) is True
            assert answered(cancelling, lambda: None) is True
            holder.commit()
            open_enqueue.commit()
        settle_checks(url)
        assert state(url, r)[0] == "queued"
        assert [state(url, j)[0] for j in (m, p, q)] == ["cancelled"] * 3
    assert stuck_waiting(url) == []


def test_a_batch_completion_and_an_enqueue_do_not_deadlock(make_database: MakeDatabase) -> None:
    """complete_many settles the waiting dependent x of its job a; an enqueue depending
    on x, d and c, and another depending on d left open, hold those rows with FOR KEY
    SHARE only: the enqueue and the batch answer at once, and x is released."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker") as (producer, worker):
        a = enqueue(producer, "bd")
        x = enqueue(producer, "bd", [a])
        d = enqueue(producer, "bd")
        c = enqueue(producer, "bd")
        tokens = claim(worker, "bd")
        assert sorted(tokens) == [a, d, c]
        with (
            connect(url, "taskboard_producer", autocommit=False) as holder,
            connect(url, "taskboard_producer", autocommit=False) as enqueuer,
            connect(url, "taskboard_worker") as completer,
        ):
            enqueue(holder, "bd", [d])
            enqueuing = Call(lambda: enqueue(enqueuer, "bd", [x, d, c]))
            enqueuing.join()
            completing = Call(
                lambda: completer.execute(
                    "SELECT completed FROM taskboard.complete_many(%s::bigint[], %s::uuid[])",
                    [[a, c], [tokens[a], tokens[c]]],
                ).fetchall()
            )
            completing.join()  # while both enqueues are still open
            assert answered(enqueuing, lambda: None) is not None
            assert answered(completing, lambda: None) == [(True,), (True,)]
            holder.commit()
            enqueuer.commit()
        assert state(url, x)[0] == "queued"
        settle_checks(url)
    assert stuck_waiting(url) == []


# -- a wide fan-out ------------------------------------------------------------------------


def test_a_completion_releases_ten_thousand_dependents(
    make_database: MakeDatabase,
) -> None:
    """The completion of a job with 10,000 dependents releases the first 1,000 of them
    in its transaction, and later claims the rest, 1,000 at a time. (What it costs is
    the benchmark's to say; settle_dependents joins by hash, each side found through
    the primary key.)"""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker") as (producer, worker):
        with psycopg.connect(url, autocommit=True) as root:
            # Jobs come and go (here a transaction rolled back): the table is empty when
            # autovacuum's ANALYZE looks, its indexes are not.
            with root.transaction(force_rollback=True):
                root.execute(WAITING_ROWS, [CAME_AND_WENT])
            root.execute("ANALYZE taskboard.jobs, taskboard.job_dependencies")
        parent = enqueue(producer, "wide")
        producer.execute(
            "SELECT count(taskboard.enqueue('t', '{}', 'wide-kids', depends_on => ARRAY[%s]::bigint[]))"
            "  FROM generate_series(1, %s)",
            [parent, FAN_OUT],
        )
        tokens = claim(worker, "wide")
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [parent, tokens[parent]])
        released = value(
            worker,
            "SELECT count(*) FROM taskboard.find_jobs(queue => 'wide-kids', state => 'queued',"
            " max_rows => 1000)",
        )
    assert released == 1000
    assert stuck_waiting(url) == []


# -- found sound ---------------------------------------------------------------------------


def test_a_batch_mixing_accepted_and_refused_tokens_releases_the_accepted_jobs_dependents_only(
    make_database: MakeDatabase,
) -> None:
    """A batch with a current token (twice), a token whose lease was reclaimed and one of
    a cancelled job: the accepted job's dependent is released, once; the reclaimed job's
    dependent still waits; the cancelled job's dependent was cancelled by the cancel."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker", "taskboard_admin") as (
        producer,
        worker,
        admin,
    ):
        a = enqueue(producer, "mix")
        b = enqueue(producer, "mix")
        c = enqueue(producer, "mix")
        xa = enqueue(producer, "mix", [a])
        xb = enqueue(producer, "mix", [b])
        xc = enqueue(producer, "mix", [c])
        tokens = claim(worker, "mix")
        with psycopg.connect(url, autocommit=True) as root:
            root.execute(
                "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
                " WHERE id = %s",
                [b],
            )
        assert list(claim(worker, "mix")) == [b]
        assert value(admin, "SELECT taskboard.cancel(%s)", [c]) is True
        answers = worker.execute(
            "SELECT job_id, completed FROM taskboard.complete_many(%s::bigint[], %s::uuid[])",
            [[a, b, c, a], [tokens[a], tokens[b], tokens[c], tokens[a]]],
        ).fetchall()
    assert answers == [(a, True), (b, False), (c, False), (a, True)]
    assert state(url, xa) == ("queued", 0, 0)
    assert state(url, xb) == ("waiting", 1, 1)
    assert state(url, xc)[0] == "cancelled"
    assert stuck_waiting(url) == []


def test_release_and_a_failure_with_attempts_left_release_no_dependent(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker") as (producer, worker):
        a = enqueue(producer, "rel")
        x = enqueue(producer, "rel", [a])
        tokens = claim(worker, "rel")
        assert value(worker, "SELECT taskboard.release(%s, %s)", [a, tokens[a]]) is True
        assert state(url, x) == ("waiting", 1, 1)
        tokens = claim(worker, "rel")
        assert value(worker, "SELECT taskboard.fail(%s, %s, 'boom')", [a, tokens[a]]) == "queued"
        assert state(url, x) == ("waiting", 1, 1)


def test_prune_of_a_cancelled_dependent_still_holding_edges_leaves_nothing_waiting(
    make_database: MakeDatabase,
) -> None:
    """A dependent cancelled while it waited keeps the edges of the dependencies that had
    not ended; prune takes it and them; the dependency then completes as usual."""
    url = make_database(deploy=True)
    with sessions(url, "taskboard_producer", "taskboard_worker", "taskboard_admin") as (
        producer,
        worker,
        admin,
    ):
        a = enqueue(producer, "pr")
        x = enqueue(producer, "pr", [a])
        y = enqueue(producer, "pr", [x])
        tokens = claim(worker, "pr")
        assert value(admin, "SELECT taskboard.cancel(%s)", [x]) is True
        assert state(url, x) == ("cancelled", 1, 1)
        assert state(url, y)[0] == "cancelled"
        assert value(admin, "SELECT taskboard.prune(interval '0 seconds')") == 2
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [a, tokens[a]]) is True
        with psycopg.connect(url, autocommit=True) as root:
            assert value(root, "SELECT count(*) FROM taskboard.job_dependencies") == 0
    assert stuck_waiting(url) == []
