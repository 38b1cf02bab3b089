"""Dependencies attacked with real concurrent sessions: the completions of many dependencies
of one job at once (fan-in), batches completing dependencies of shared dependents in
opposite orders, and dependents enqueued while their dependency completes or fails, in
READ COMMITTED, REPEATABLE READ and SERIALIZABLE. No job may be left waiting for a
dependency that ended, none released twice or before its last dependency succeeded."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import psycopg
import pytest
from psycopg import errors as pgerrors

from tests.support.database import MakeDatabase, settle_checks, stuck_waiting

ISOLATION = [
    psycopg.IsolationLevel.READ_COMMITTED,
    psycopg.IsolationLevel.REPEATABLE_READ,
    psycopg.IsolationLevel.SERIALIZABLE,
]


def retrying(conn: psycopg.Connection, call: Callable[[], object]) -> object:
    """call() in a transaction of its own, again after a serialization failure."""
    while True:
        try:
            with conn.transaction():
                return call()
        except pgerrors.SerializationFailure:
            continue


def in_threads(workers: list[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def run(work: Callable[[], None]) -> None:
        try:
            work()
        except (AssertionError, psycopg.Error) as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[0]


def claim_all(url: str, queue: str) -> dict[int, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT job_id, token::text FROM taskboard.claim(%s, 'w', 1000)", [queue]
        ).fetchall()
    return dict(rows)


def test_many_dependencies_completed_at_once_release_their_job_once(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        deps = [
            r[0]
            for r in conn.execute(
                "SELECT taskboard.enqueue('dep', '{}', 'fan') FROM generate_series(1, 60)"
            ).fetchall()
        ]
        child = conn.execute(
            "SELECT taskboard.enqueue('child', '{}', 'fan', depends_on => %s)", [deps]
        ).fetchone()
        assert child is not None
    tokens = claim_all(url, "fan")
    assert set(tokens) == set(deps)
    ids = list(tokens)
    random.Random(1).shuffle(ids)
    parts = [ids[n::6] for n in range(6)]

    def completer(n: int) -> Callable[[], None]:
        def work() -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.isolation_level = ISOLATION[n % len(ISOLATION)]
                for job_id in parts[n]:

                    def complete(j: int = job_id) -> object:
                        return conn.execute(
                            "SELECT taskboard.complete(%s, %s)", [j, tokens[j]]
                        ).fetchone()

                    assert retrying(conn, complete) == (True,)

        return work

    in_threads([completer(n) for n in range(6)])
    # A completion that found the child locked by another's settle left it to a later
    # claim.
    settle_checks(url)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT state, dependencies_left, run_at >= (SELECT max(finished_at) FROM taskboard.jobs"
            "  WHERE id = ANY(%s)) FROM taskboard.jobs WHERE id = %s",
            [deps, child[0]],
        ).fetchone()
    assert row == ("queued", 0, True)
    assert stuck_waiting(url) == []


def test_batches_completing_shared_dependencies_in_opposite_orders_do_not_deadlock(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        deps = [
            r[0]
            for r in conn.execute(
                "SELECT taskboard.enqueue('dep', '{}', 'mesh') FROM generate_series(1, 40)"
            ).fetchall()
        ]
        rng = random.Random(2)
        for _ in range(30):
            conn.execute(
                "SELECT taskboard.enqueue('child', '{}', 'mesh', depends_on => %s)",
                [rng.sample(deps, 6)],
            )
    tokens = claim_all(url, "mesh")
    halves = [deps[:20], deps[20:]]

    def batch(n: int) -> Callable[[], None]:
        def work() -> None:
            order = halves[n % 2] if n < 2 else list(reversed(halves[n % 2]))
            with psycopg.connect(url, autocommit=True) as conn:
                conn.isolation_level = ISOLATION[n % len(ISOLATION)]
                for at in range(0, len(order), 5):
                    ids = [j for j in order[at : at + 5] if tokens.get(j)]

                    def complete_many(ids: list[int] = ids) -> object:
                        return conn.execute(
                            "SELECT taskboard.complete_many(%s::bigint[], %s::uuid[])",
                            [ids, [tokens[j] for j in ids]],
                        ).fetchall()

                    retrying(conn, complete_many)

        return work

    # Two sessions per half, one in each order: the same jobs completed twice by their
    # holder (the second answer true, nothing settled twice).
    in_threads([batch(n) for n in range(4)])
    settle_checks(url)
    with psycopg.connect(url, autocommit=True) as conn:
        states: dict[str, int] = dict(
            conn.execute(
                "SELECT state, count(*) FROM taskboard.jobs WHERE task = 'child' GROUP BY 1"
            ).fetchall()
        )
        edges = conn.execute("SELECT count(*) FROM taskboard.job_dependencies").fetchone()
    assert states == {"queued": 30} and edges == (0,)
    assert stuck_waiting(url) == []


def one_round(url: str, ending: str, queue: str) -> dict[str, int]:
    """One session ends a running job while four others enqueue three dependents of it
    each, every isolation level among them: the dependents' states by count."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT taskboard.enqueue('dep', '{}', %s)", [queue]).fetchone()
        assert row is not None
    dep = int(row[0])
    token = claim_all(url, queue)[dep]
    go = threading.Barrier(5)

    def end() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            go.wait()
            if ending == "complete":
                conn.execute("SELECT taskboard.complete(%s, %s)", [dep, token])
            elif ending == "fail":
                conn.execute("SELECT taskboard.fail(%s, %s, 'boom', retry => false)", [dep, token])
            else:
                conn.execute("SELECT taskboard.cancel(%s)", [dep])

    def enqueuer(n: int) -> Callable[[], None]:
        def work() -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.isolation_level = ISOLATION[n % len(ISOLATION)]
                go.wait()
                for _ in range(3):
                    retrying(
                        conn,
                        lambda: conn.execute(
                            "SELECT taskboard.enqueue('child', '{}', %s, depends_on => %s)",
                            [queue, [dep]],
                        ).fetchone(),
                    )

        return work

    in_threads([end, *[enqueuer(n) for n in range(4)]])
    with psycopg.connect(url, autocommit=True) as conn:
        # An edge its dependency's end could not see is settled by a later claim, of
        # any queue, once the enqueue that wrote it has committed.
        conn.execute("SELECT count(*) FROM taskboard.claim('elsewhere', 'checker')")
        rows = conn.execute(
            "SELECT state, count(*) FROM taskboard.jobs WHERE queue = %s AND task = 'child'"
            " GROUP BY 1",
            [queue],
        ).fetchall()
    return {state: int(n) for state, n in rows}


@pytest.mark.parametrize("ending", ["complete", "fail", "cancel"])
def test_dependents_enqueued_while_their_dependency_ends_are_never_left_waiting(
    make_database: MakeDatabase, ending: str
) -> None:
    """Afterwards no dependent waits for the dependency, and each is queued (a success)
    or cancelled (a death or a cancel)."""
    url = make_database(deploy=True)
    for round_ in range(12):
        states = one_round(url, ending, f"r{round_}")
        assert states == {"queued" if ending == "complete" else "cancelled": 12}, (round_, states)
    assert stuck_waiting(url) == []


def test_the_race_catches_an_enqueue_that_reads_its_dependency_unlocked(
    make_database: MakeDatabase,
) -> None:
    """The control: an enqueue reads its dependency running, and writes its edge after
    the completion settled the dependents; without the check it writes for a later
    claim, such a dependent is left waiting for good."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_get_functiondef('taskboard.enqueue_waiting(text,jsonb,text,timestamptz,"
            "integer,integer,text,jsonb,text,bigint[],text)'::regprocedure)"
        ).fetchone()
        assert row is not None
        source = str(row[0])
        old = "INSERT INTO taskboard.dependency_checks (job_id, side) VALUES (v_id, 'dependent');"
        assert old in source
        conn.execute(source.replace(old, "NULL;", 1))
    left = 0
    for round_ in range(12):
        states = one_round(url, "complete", f"m{round_}")
        left += states.get("waiting", 0)
    assert left > 0, "no dependent was left waiting"
