"""A control connection's claim cursor (taskboard.claim_cursor = on) while a snapshot
holds the xmin horizon back.

No row version a claim or a completion replaces can then be removed, so the head of
the queue's queued index and its running index fill with entries that point at dead
versions. A claim that walks from the head reads every one of them; a claim after its
session's cursor reads about the jobs it takes. The index's own counters tell, without
timing anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import psycopg

from taskboard.sql import worker as sql_worker
from tests.support.database import MakeDatabase

BATCH = 32
CHURNED = 1_500
ENTRIES_READ = """
SELECT pg_catalog.pg_stat_get_xact_tuples_returned('taskboard.jobs_queued_claim_order'::regclass)
     + pg_catalog.pg_stat_get_xact_tuples_returned('taskboard.jobs_running_by_queue'::regclass)
"""
CLAIM = """
SELECT job_id, token FROM taskboard.claim(queue => 'default', worker => 'w', batch => %s)
"""
CURSOR = "SELECT current_setting('taskboard.cursor_' || to_hex(hashtext('default')), true)"


def cycle(conn: psycopg.Connection) -> int:
    """One claim of a batch and its completion; the jobs done."""
    rows = conn.execute(CLAIM, [BATCH]).fetchall()
    if rows:
        conn.execute(
            "SELECT taskboard.complete_many(job_ids => %s::bigint[], tokens => %s::uuid[])",
            [[r[0] for r in rows], [r[1] for r in rows]],
        )
    return len(rows)


def entries_read_by_a_claim(
    conn: psycopg.Connection, push_due: str | None = None
) -> tuple[int, int]:
    """The jobs one claim took, and the entries it read of the two indexes it walks;
    with `push_due` (a cursor's fields after its first), the claim's session has the
    cursor those fields name, its walk due a second on."""
    with conn.transaction():
        if push_due is not None:
            conn.execute(
                "SELECT set_config('taskboard.cursor_' || to_hex(hashtext('default')),"
                " ((extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 1000000)::text"
                " || ' ' || %s, false)",
                [push_due],
            )
        (before,) = conn.execute(ENTRIES_READ).fetchone() or (0,)
        rows = conn.execute(CLAIM, [BATCH]).fetchall()
        (after,) = conn.execute(ENTRIES_READ).fetchone() or (0,)
    return len(rows), int(after) - int(before)


def test_under_a_held_snapshot_a_cursor_claim_reads_its_jobs_not_the_dead_head(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with (
        psycopg.connect(url, autocommit=True) as owner,
        psycopg.connect(url) as holder,
        psycopg.connect(url, autocommit=True) as cursor_session,
        psycopg.connect(url, autocommit=True) as plain_session,
    ):
        for conn in (cursor_session, plain_session):
            conn.execute("SET ROLE taskboard_worker")
        cursor_session.execute("SELECT set_config('taskboard.claim_cursor', 'on', false)")
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [CHURNED + 20 * BATCH],
        )
        holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM taskboard.queues")  # the snapshot is held

        done = 0
        while done < CHURNED:
            done += cycle(cursor_session)
        # The measured claim comes before the session's next walk is due: the
        # cursor's first field, set to a second after the clock in the claim's
        # own transaction (a walk is never due more than 2 s on).
        (kept,) = cursor_session.execute(CURSOR).fetchone() or (None,)
        assert kept, "a claim of a session with taskboard.claim_cursor = on keeps no cursor"
        took, cursor_read = entries_read_by_a_claim(cursor_session, push_due=kept.split(" ", 1)[1])
        assert took == BATCH
        plain_took, plain_read = entries_read_by_a_claim(plain_session)
        assert plain_took == BATCH
        holder.rollback()

    # After its cursor: the batch, the last batch's dead entries and the
    # finished jobs' running entries it no longer walks. From the head: every
    # job claimed since the snapshot, in the queued index and the running one.
    assert cursor_read < 4 * BATCH, f"a cursor claim read {cursor_read} index entries"
    assert plain_read > CHURNED, f"a claim from the head read only {plain_read} index entries"


def test_a_control_connection_keeps_a_claim_cursor(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)

    async def settings() -> tuple[str, str]:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await sql_worker.prepare_claimer(conn, 2.5)
            row = await (
                await conn.execute(
                    "SELECT current_setting('taskboard.claim_cursor'),"
                    " current_setting('lock_timeout')"
                )
            ).fetchone()
            assert row is not None
            return row[0], row[1]

    assert asyncio.run(settings()) == ("on", "2500ms")


def test_a_walk_that_waited_for_its_turn_counts_only_its_own_time(
    make_database: MakeDatabase,
) -> None:
    """A claim that waited behind a first limit being set (the queue's advisory lock)
    makes its next walk due about 200 ms after it, not twenty times its wait."""
    url = make_database(deploy=True)
    with (
        psycopg.connect(url) as in_flight,
        psycopg.connect(url, autocommit=True) as admin,
        psycopg.connect(url, autocommit=True) as cursor_session,
    ):
        admin.execute("SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[100]))")
        cursor_session.execute("SET ROLE taskboard_worker")
        cursor_session.execute("SELECT set_config('taskboard.claim_cursor', 'on', false)")
        in_flight.execute(CLAIM, [1])  # a claim in flight: its transaction stays open
        admin.execute("SET lock_timeout = '900ms'")

        def limit() -> None:
            # Waits for the claim in flight, and gives up after 0.9 s.
            with contextlib.suppress(psycopg.errors.LockNotAvailable):
                admin.execute("SELECT taskboard.set_queue_limit('default', 5)")

        setter = threading.Thread(target=limit)
        setter.start()
        time.sleep(0.3)  # the limit is being set: the next claim waits behind it
        started = time.monotonic()
        rows = cursor_session.execute(CLAIM, [BATCH]).fetchall()
        waited = time.monotonic() - started
        (due_in,) = cursor_session.execute(
            "SELECT (split_part(current_setting('taskboard.cursor_' || to_hex(hashtext('default'))), ' ', 1)::bigint"
            " - (extract(epoch FROM clock_timestamp()) * 1000000)::bigint) / 1e6"
        ).fetchone() or (None,)
        setter.join()
        in_flight.rollback()

    assert len(rows) == BATCH
    assert waited > 0.4, f"the claim did not wait behind the limit being set ({waited:.2f} s)"
    assert due_in is not None and float(due_in) < 1.5, (
        f"after waiting {waited:.2f} s for its turn, the next walk is due in {due_in} s"
    )
