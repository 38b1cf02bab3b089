"""The key limit at its edges: a key with many jobs at the head does not shrink a claim;
a spent expired job frees its key in the claim that buries it (as under a queue limit);
deep keys ahead of many others; a lease's end frees nothing until the job is reclaimed and
finished; a limit set while a removal of it is in flight still waits for the claims made
meanwhile (a key limit and a queue limit)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest

from tests.support.database import MakeDatabase


def claimed(conn: psycopg.Connection, queue: str, batch: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM taskboard.claim(%s, 'w', %s)", [queue, batch]
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_key_with_many_jobs_at_the_head_does_not_shrink_a_claim_to_one_job(
    make_database: MakeDatabase,
) -> None:
    """100 customers with 50 jobs each, enqueued customer by customer, a key limit of 1:
    a claim of 10 starts 10 jobs of 10 customers, although the head one round reads is
    40 jobs of one customer's (fewer rows than the batch tells a worker nothing else is
    runnable, and it waits)."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('hol', 1)")
        conn.execute(
            "SELECT count(*) FROM generate_series(1, 100) AS c,"
            " LATERAL taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[50]), 'hol',"
            "   concurrency_keys => array_fill('customer-' || c, ARRAY[50]))"
        )
        got = [claimed(conn, "hol", 10) for _ in range(5)]
    assert got == [10] * 5, f"claims of 10 started {got} jobs with 100 customers runnable"


def test_a_spent_expired_job_does_not_hold_its_key_in_the_claim_that_buries_it(
    make_database: MakeDatabase,
) -> None:
    """The queue limit leaves out an expired job with no attempt left (the same claim makes
    it dead); the key limit counts it, so that claim starts nothing of its key and returns
    fewer rows than the batch while a job is runnable."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('spent', 1)")
        spent = conn.execute(
            "SELECT taskboard.enqueue('t', '{}', 'spent', max_attempts => 1, concurrency_key => 'K')"
        ).fetchone()
        conn.execute("SELECT taskboard.enqueue('t', '{}', 'spent', concurrency_key => 'K')")
        assert claimed(conn, "spent", 1) == 1
        assert spent is not None
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [spent[0]],
        )
        got = claimed(conn, "spent", 5)
        state = conn.execute(
            "SELECT state FROM taskboard.jobs WHERE id = %s", [spent[0]]
        ).fetchone()
    assert state == ("dead",)
    assert got == 1, "the claim that buried K's spent job started none of K's queued jobs"


def test_the_queue_limit_does_not_count_a_spent_expired_job(make_database: MakeDatabase) -> None:
    """The control for the test above: the same story under a queue limit of 1."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_queue_limit('spent', 1)")
        spent = conn.execute(
            "SELECT taskboard.enqueue('t', '{}', 'spent', max_attempts => 1)"
        ).fetchone()
        conn.execute("SELECT taskboard.enqueue('t', '{}', 'spent')")
        assert claimed(conn, "spent", 1) == 1
        assert spent is not None
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [spent[0]],
        )
        assert claimed(conn, "spent", 5) == 1


MANY_KEYS = """
    SELECT taskboard.set_key_limit('many', 1);
    SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[20000]), 'many',
           concurrency_keys => array_fill('hot'::text, ARRAY[20000]));
    SELECT count(*) FROM generate_series(1, 1000) AS c,
           LATERAL taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[50]), 'many',
                   concurrency_keys => array_fill('customer-' || c, ARRAY[50]));
    ANALYZE taskboard.jobs;
"""


def test_claims_under_a_key_limit_with_deep_keys_take_what_they_may(
    make_database: MakeDatabase,
) -> None:
    """One hot key with 20,000 queued jobs, then 1,000 customers with 50 queued jobs each
    (enqueued customer by customer), a key limit of 1: each claim starts one job of each
    key with room, up to its batch, walking past the hot key's backlog; once every key
    is full a claim takes nothing. (Its cost is measured in bench W9, not here.)"""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(MANY_KEYS)
        got = [claimed(conn, "many", batch) for batch in (10, 100, 1000, 1000, 10)]
        most = conn.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM taskboard.jobs"
            " WHERE queue = 'many' AND state = 'running' GROUP BY concurrency_key) AS k"
        ).fetchone()
    assert got == [10, 100, 891, 0, 0], got
    assert most == (1,)


def test_a_keys_next_job_does_not_start_when_the_holders_lease_ends(
    make_database: MakeDatabase,
) -> None:
    """The guide's SQL session says the second acme job "waits, queued, until the first
    one's lease ends". It waits longer: the first job's lease ending frees nothing (its
    worker may still run it); the next claim reclaims the first job, and the second
    starts only once the first finishes."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('sync', 1)")
        first = conn.execute(
            "SELECT taskboard.enqueue('sync_customer', '{}', 'sync', concurrency_key => 'acme')"
        ).fetchone()
        conn.execute(
            "SELECT taskboard.enqueue('sync_customer', '{}', 'sync', concurrency_key => 'acme')"
        )
        assert first is not None
        assert conn.execute("SELECT job_id FROM taskboard.claim('sync', 'w1', 10)").fetchall() == [
            first
        ]
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [first[0]],
        )
        again = conn.execute(
            "SELECT job_id, token FROM taskboard.claim('sync', 'w2', 10)"
        ).fetchall()
        assert [row[0] for row in again] == [first[0]], "the lease's end started the second job"
        conn.execute("SELECT taskboard.complete(%s, %s)", list(again[0]))
        assert claimed(conn, "sync", 10) == 1


def waits_for_a_lock(url: str, session: psycopg.Connection) -> None:
    """Return once `session` waits for a lock another session holds (no sleeps)."""
    pid = session.info.backend_pid
    with psycopg.connect(url, autocommit=True) as watcher:
        for _ in range(500):
            row = watcher.execute("SELECT cardinality(pg_blocking_pids(%s))", [pid]).fetchone()
            if row is not None and row[0] > 0:
                return
            watcher.execute("SELECT pg_sleep(0.01)")
    raise AssertionError(f"session {pid} never waited for a lock")


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    return thread, out


SET_LIMIT = {
    "key": "SELECT taskboard.set_key_limit('race', %s)",
    "queue": "SELECT taskboard.set_queue_limit('race', %s)",
}
ENQUEUE_TWO = {
    "key": "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[2]),"
    " 'race', concurrency_keys => ARRAY['K', 'K'])",
    "queue": "SELECT count(*) FROM taskboard.enqueue_many('t', array_fill('{}'::jsonb, ARRAY[2]),"
    " 'race')",
}


@pytest.mark.parametrize("kind", ["key", "queue"])
def test_a_limit_set_while_its_removal_is_in_flight_waits_for_the_claims_meanwhile(
    make_database: MakeDatabase, kind: str
) -> None:
    """One admin removes the limit (not committed yet) while another sets it again: the
    set waits for the removal's row, then writes a limit while a claim made after the
    removal's commit, under no limit, may still be in flight. Setting a limit takes the
    queue's claim lock exclusively every time, not only when the queue had none: the
    claim made meanwhile waits for the set, reads the limit, and together with a later
    claim never passes it (the limit is 1; before, a second job started)."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SET_LIMIT[kind], [1])
        conn.execute(ENQUEUE_TWO[kind])
    clearing = psycopg.connect(url)
    setting = psycopg.connect(url)
    early = psycopg.connect(url)
    try:
        clearing.execute(SET_LIMIT[kind], [None])  # not committed yet
        set_thread, _ = in_thread(lambda: setting.execute(SET_LIMIT[kind], [1]))
        waits_for_a_lock(url, setting)  # for the removal's row
        clearing.commit()
        set_thread.join(10)
        assert not set_thread.is_alive()  # the set has written the limit, not committed
        claim_thread, first = in_thread(
            lambda: early.execute(
                "SELECT job_id FROM taskboard.claim('race', 'early', 1)"
            ).fetchall()
        )
        waits_for_a_lock(url, early)  # for the set's claim lock
        setting.commit()
        claim_thread.join(10)
        assert not claim_thread.is_alive() and len(first[0]) == 1  # type: ignore[arg-type]
        early.commit()
        with psycopg.connect(url, autocommit=True) as late:
            if kind == "key":
                late.execute(
                    "SELECT taskboard.enqueue('t', '{}', 'race', priority => 10,"
                    " concurrency_key => 'K')"
                )
            second = late.execute(
                "SELECT job_id FROM taskboard.claim('race', 'late', 1)"
            ).fetchall()
    finally:
        for conn in (clearing, setting, early):
            conn.close()
    assert second == [], f"a second job started under a {kind} limit of 1"
