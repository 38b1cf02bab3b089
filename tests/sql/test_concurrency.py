"""Races between sessions: what pgTAP, inside one transaction, cannot show."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect, expire, value

WORKER = "taskboard_worker"
PRODUCER = "taskboard_producer"


def test_concurrent_claimers_never_receive_the_same_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('race', array_fill('{}'::jsonb, ARRAY[400]), queue => 'race')"
        )

    start = threading.Barrier(4)

    def drain(name: str) -> list[int]:
        got: list[int] = []
        with connect(url, WORKER) as conn:
            start.wait()
            while True:
                rows = conn.execute(
                    "SELECT job_id FROM taskboard.claim('race', %s, batch => 7)", [name]
                ).fetchall()
                if not rows:
                    return got
                got.extend(r[0] for r in rows)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(drain, ["w1", "w2", "w3", "w4"]))

    claimed = [job for result in results for job in result]
    assert len(claimed) == 400
    assert len(set(claimed)) == 400, "a job was handed to two claimers"


def test_a_claim_skips_jobs_locked_by_another_claim_in_progress(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        first = value(producer, "SELECT taskboard.enqueue('t', queue => 'skip', priority => 9)")
        second = value(producer, "SELECT taskboard.enqueue('t', queue => 'skip')")

    with connect(url, WORKER, autocommit=False) as slow, connect(url, WORKER) as fast:
        assert value(slow, "SELECT job_id FROM taskboard.claim('skip', 'slow')") == first
        fast.execute("SET lock_timeout = '2s'")
        # The first claim has not committed: the second claimer neither waits nor takes it.
        assert value(fast, "SELECT job_id FROM taskboard.claim('skip', 'fast')") == second
        slow.commit()


def test_a_claim_left_open_does_not_hide_expired_jobs_beyond_its_batch(
    make_database: MakeDatabase,
) -> None:
    """claim once locked every expired lease of its queue until its transaction
    ended, so one slow claimer starved the others of reclaimable jobs."""
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[3]), queue => 'stalled')"
        )
    with connect(url, WORKER) as stalled:
        jobs = [
            r[0]
            for r in stalled.execute(
                "SELECT job_id FROM taskboard.claim('stalled', 'stalled', batch => 3)"
            ).fetchall()
        ]
    assert len(jobs) == 3
    for job in jobs:
        expire(url, job)

    with connect(url, WORKER, autocommit=False) as first, connect(url, WORKER) as second:
        taken_first = first.execute(
            "SELECT job_id, attempt FROM taskboard.claim('stalled', 'first', batch => 1)"
        ).fetchall()
        assert taken_first == [(jobs[0], 2)]
        second.execute("SET lock_timeout = '2s'")
        # The first claim's transaction is still open.
        taken_second = second.execute(
            "SELECT job_id, attempt FROM taskboard.claim('stalled', 'second', batch => 2)"
        ).fetchall()
        assert sorted(taken_second) == [(jobs[1], 2), (jobs[2], 2)], (
            "the open claim still locks expired jobs it did not take"
        )
        first.commit()


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
def test_concurrent_enqueues_with_one_dedupe_key_leave_one_unfinished_job(
    make_database: MakeDatabase, outcome: str
) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER, autocommit=False) as first, connect(url, PRODUCER) as second:
        first_id = value(first, "SELECT taskboard.enqueue('t', queue => 'dd', dedupe_key => 'k')")
        with ThreadPoolExecutor(1) as pool:
            # Blocks on the unique index until the first transaction ends.
            pending = pool.submit(
                value, second, "SELECT taskboard.enqueue('t', queue => 'dd', dedupe_key => 'k')"
            )
            if outcome == "commit":
                first.commit()
            else:
                first.rollback()
            second_id = pending.result(timeout=10)

    if outcome == "commit":
        assert second_id == first_id
    else:
        assert second_id != first_id
    with psycopg.connect(url) as conn:
        count = value(conn, "SELECT count(*) FROM taskboard.jobs WHERE queue = 'dd'")
    assert count == 1


def test_many_concurrent_enqueues_with_the_same_dedupe_key_agree_on_one_job(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    start = threading.Barrier(6)

    def enqueue(_: int) -> list[int]:
        with connect(url, PRODUCER) as conn:
            start.wait()
            return [
                int(
                    value(
                        conn, "SELECT taskboard.enqueue('t', queue => 'herd', dedupe_key => 'same')"
                    )
                )
                for _ in range(20)
            ]

    with ThreadPoolExecutor(6) as pool:
        ids = {job for result in pool.map(enqueue, range(6)) for job in result}
    assert len(ids) == 1


def _claim_two(url: str) -> list[tuple[int, str]]:
    with connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array['{}', '{}']::jsonb[], queue => 'order')"
        )
    with connect(url, WORKER) as worker:
        rows = worker.execute(
            "SELECT job_id, token::text FROM taskboard.claim('order', 'w', 2)"
        ).fetchall()
    return sorted((r[0], r[1]) for r in rows)


@pytest.mark.parametrize(
    "call",
    [
        "SELECT * FROM taskboard.renew_many(%s::bigint[], %s::uuid[])",
        "SELECT * FROM taskboard.complete_many(%s::bigint[], %s::uuid[])",
    ],
    ids=["renew_many", "complete_many"],
)
def test_multi_job_calls_lock_rows_in_job_id_order(make_database: MakeDatabase, call: str) -> None:
    """Given the higher id first, the call still locks the lower id before waiting on the higher."""
    url = make_database(deploy=True)
    (low, low_token), (high, high_token) = _claim_two(url)

    with (
        connect(url, WORKER, autocommit=False) as holder,
        connect(url, WORKER) as batch,
        connect(url, WORKER) as probe,
        psycopg.connect(url, autocommit=True) as watcher,  # sees every session in pg_stat_activity
        ThreadPoolExecutor(1) as pool,
    ):
        holder.execute("SELECT taskboard.renew(%s, %s)", [high, high_token])  # holds the high row
        pending = pool.submit(
            lambda: batch.execute(call, [[high, low], [high_token, low_token]]).fetchall()
        )
        try:
            batch_pid = batch.info.backend_pid
            for _ in range(200):
                if value(
                    watcher,
                    "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                    [batch_pid],
                ):
                    break
                threading.Event().wait(0.05)
            else:
                raise AssertionError("the batch call never waited on the held row")
            # Having locked in id order, it already holds the low row.
            probe.execute("SET lock_timeout = '300ms'")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                probe.execute("SELECT taskboard.renew(%s, %s)", [low, low_token])
        finally:
            holder.commit()
        rows = pending.result(timeout=10)
    assert [r[0] for r in rows] == [high, low], "rows come back in input order"


def test_a_renewer_and_a_completer_given_opposite_orders_do_not_deadlock(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, PRODUCER) as producer:
        producer.execute(
            "SELECT taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[60]), queue => 'dl')"
        )
    with connect(url, WORKER) as worker:
        held = worker.execute("SELECT job_id, token FROM taskboard.claim('dl', 'w', 60)").fetchall()
    ids = [r[0] for r in held]
    tokens = [r[1] for r in held]
    start = threading.Barrier(2)

    def renewer() -> None:
        with connect(url, WORKER) as conn:
            start.wait()
            for _ in range(30):
                conn.execute(
                    "SELECT * FROM taskboard.renew_many(%s, %s)", [ids[::-1], tokens[::-1]]
                ).fetchall()

    def completer() -> list[bool]:
        with connect(url, WORKER) as conn:
            start.wait()
            done: list[bool] = []
            for i in range(0, 60, 2):
                rows = conn.execute(
                    "SELECT completed FROM taskboard.complete_many(%s, %s)", [ids[i:], tokens[i:]]
                ).fetchall()
                done.append(all(r[0] for r in rows))
            return done

    with ThreadPoolExecutor(2) as pool:
        renewing = pool.submit(renewer)
        completing = pool.submit(completer)
        renewing.result(timeout=60)  # a deadlock would raise DeadlockDetected here
        assert all(completing.result(timeout=60))


DEADLOCK_ROUNDS = 30


def test_concurrent_enqueue_many_with_overlapping_keys_in_opposite_orders_never_deadlock(
    make_database: MakeDatabase,
) -> None:
    """Two producers enqueue the same keys, one in the reverse order of the other, each in a
    transaction it holds open a moment: they wait for each other, never deadlock, and agree."""
    url = make_database(deploy=True)
    keys = [f"k{n:02d}" for n in range(20)]

    def enqueue(order: list[str], round_: int, start: threading.Barrier) -> list[int]:
        with connect(url, PRODUCER, autocommit=False) as conn:
            start.wait()
            ids = [
                int(r[0])
                for r in conn.execute(
                    "SELECT * FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb,"
                    " ARRAY[%s]), queue => %s, dedupe_keys => %s)",
                    [len(order), f"round-{round_}", order],
                ).fetchall()
            ]
            conn.commit()
            return [ids[order.index(k)] for k in keys]

    for round_ in range(DEADLOCK_ROUNDS):
        start = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            ahead = pool.submit(enqueue, keys, round_, start)
            behind = pool.submit(enqueue, keys[::-1], round_, start)
            assert ahead.result(timeout=30) == behind.result(timeout=30), f"round {round_}"
    with psycopg.connect(url) as conn:
        count = value(conn, "SELECT count(*) FROM taskboard.jobs")
    assert count == DEADLOCK_ROUNDS * len(keys)
