"""claim, complete_many and renew_many stay bounded index walks in a session that began
on an empty table.

Workers usually start before the work arrives, and claim keeps the plan of
its first call in a session: a plan made for an empty table. Made without
care, such a plan joins the chosen ids to the table by scanning every row,
or buries expired jobs by walking every running job of every queue once per
job: each claim would then read the whole backlog and history. The table's
own counters tell, without timing anything: a claim must not add a
sequential scan of taskboard.jobs, nor must the completion or renewal of the
claimed batch, and the rows a claim fetches through indexes stay near what
it takes. The calls are made more than five times on the empty table first,
so that PostgreSQL's plan cache has had its chance to switch to a generic
plan (complete_many and renew_many are left to choose).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import psycopg

from tests.support.database import MakeDatabase

FINISHED_ROWS = 100_000
QUEUED_JOBS = 200
BATCH = 32

GROW = """
INSERT INTO taskboard.jobs (
    queue, task, payload, state, run_at, attempt, max_attempts,
    lease_token, lease_expires_at, claimed_by, created_at, finished_at)
SELECT 'default', 'noop', '{}', 'succeeded', t.at, 1, 5,
       pg_catalog.md5(g::text)::uuid, t.at + interval '60 seconds', 'grower',
       t.at, t.at + interval '25 milliseconds'
  FROM pg_catalog.generate_series(1, %s) AS g,
       LATERAL (SELECT now() - interval '1 day' + g * interval '1 millisecond') AS t(at)
"""

SEQ_SCANS = """
SELECT seq_scan FROM pg_catalog.pg_stat_xact_user_tables WHERE relid = 'taskboard.jobs'::regclass
"""
TABLE_READS = """
SELECT seq_scan, idx_tup_fetch FROM pg_catalog.pg_stat_xact_user_tables
 WHERE relid = 'taskboard.jobs'::regclass
"""
T = TypeVar("T")
RUNNING_ELSEWHERE = 5_000  # live leases in another queue
EXPIRED_SPENT = 40  # expired leases in 'default' with no attempt left: claim buries them
EXPIRED_RECLAIMABLE = 40  # expired leases in 'default' with attempts left: claim takes them
EXPIRED = """
INSERT INTO taskboard.jobs (
    queue, task, payload, state, run_at, attempt, max_attempts,
    lease_token, lease_expires_at, claimed_by, started_at)
SELECT %s, 'noop', '{}', 'running', now() - interval '1 hour', %s, 5,
       pg_catalog.gen_random_uuid(), now() + %s::interval, 'gone', now() - interval '1 hour'
  FROM pg_catalog.generate_series(1, %s)
"""


def claim(conn: psycopg.Connection, batch: int) -> list[int]:
    rows = conn.execute(
        "SELECT job_id FROM taskboard.claim(queue => 'default', worker => 'w', batch => %s)",
        [batch],
    ).fetchall()
    return [r[0] for r in rows]


def complete_many(conn: psycopg.Connection, job_ids: list[int], tokens: list[str]) -> list[bool]:
    rows = conn.execute(
        "SELECT completed FROM taskboard.complete_many(job_ids => %s::bigint[], tokens => %s::uuid[])",
        [job_ids, tokens],
    ).fetchall()
    return [r[0] for r in rows]


def renew_many(conn: psycopg.Connection, job_ids: list[int], tokens: list[str]) -> list[object]:
    rows = conn.execute(
        "SELECT lease_expires_at FROM taskboard.renew_many(job_ids => %s::bigint[], tokens => %s::uuid[])",
        [job_ids, tokens],
    ).fetchall()
    return [r[0] for r in rows]


def scans(conn: psycopg.Connection) -> object:
    return conn.execute(SEQ_SCANS).fetchone()


def reads(conn: psycopg.Connection, call: Callable[[], T]) -> tuple[T, int, int]:
    """call()'s answer, and the sequential scans and index fetches of taskboard.jobs it made."""
    with conn.transaction():
        before = conn.execute(TABLE_READS).fetchone()
        answer = call()
        after = conn.execute(TABLE_READS).fetchone()
    assert before is not None and after is not None
    return answer, after[0] - before[0], after[1] - before[1]


def test_calls_on_a_grown_table_scan_no_table_in_a_session_begun_on_an_empty_one(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    nobody = ["00000000-0000-0000-0000-000000000000"] * 2
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        worker.execute("SET ROLE taskboard_worker")
        for _ in range(8):  # the worker starts before any work arrives
            assert claim(worker, BATCH) == []
            assert complete_many(worker, [1, 2], nobody) == [False, False]
            assert renew_many(worker, [1, 2], nobody) == [None, None]

        owner.execute(GROW, [FINISHED_ROWS])
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [QUEUED_JOBS],
        )

        for _ in range(3):
            with worker.transaction():
                before = scans(worker)
                got = worker.execute(
                    "SELECT job_id, token FROM taskboard.claim(queue => 'default', worker => 'w', batch => %s)",
                    [BATCH],
                ).fetchall()
                claimed = scans(worker)
                ids, tokens = [r[0] for r in got], [str(r[1]) for r in got]
                renewed = renew_many(worker, ids, tokens)
                after_renew = scans(worker)
                completed = complete_many(worker, ids, tokens)
                after_complete = scans(worker)
            assert len(got) == BATCH and None not in renewed and all(completed)
            assert before == claimed, (
                f"claim scanned taskboard.jobs: seq_scan {before} -> {claimed}"
            )
            assert claimed == after_renew, (
                f"renew_many scanned taskboard.jobs: {claimed} -> {after_renew}"
            )
            assert after_renew == after_complete, (
                f"complete_many scanned taskboard.jobs: {after_renew} -> {after_complete}"
            )


def test_a_claim_that_buries_and_reclaims_reads_its_own_queue_only(
    make_database: MakeDatabase,
) -> None:
    """Expired leases to bury and to take back in the claimed queue, thousands of live
    ones in another: with the plan of an empty table, the claim still finds what it
    buries by id, and fetches about what its own queue holds, not every running job."""
    url = make_database(deploy=True)
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        worker.execute("SET ROLE taskboard_worker")
        for _ in range(8):
            assert claim(worker, BATCH) == []

        owner.execute(GROW, [FINISHED_ROWS])
        owner.execute(EXPIRED, ["other", 1, "1 hour", RUNNING_ELSEWHERE])
        owner.execute(EXPIRED, ["default", 5, "-1 minute", EXPIRED_SPENT])
        owner.execute(EXPIRED, ["default", 1, "-1 minute", EXPIRED_RECLAIMABLE])
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [QUEUED_JOBS],
        )

        with worker.transaction():
            before = worker.execute(TABLE_READS).fetchone()
            got = claim(worker, BATCH)
            after = worker.execute(TABLE_READS).fetchone()
        assert before is not None and after is not None
        assert len(got) == BATCH
        assert after[0] == before[0], f"claim scanned taskboard.jobs: seq_scan {before} -> {after}"
        fetched = after[1] - before[1]
        # Its queue's running jobs (read twice: to bury and to take back), the
        # buried ones by id, the queued head and the claimed ones by id: a few
        # hundred rows. Walking the other queue's running jobs would be thousands.
        own = 2 * (EXPIRED_SPENT + EXPIRED_RECLAIMABLE) + EXPIRED_SPENT + 4 * BATCH
        assert fetched < own + 200 < RUNNING_ELSEWHERE, (
            f"claim fetched {fetched} rows through indexes; its own queue accounts for about {own}"
        )
        dead = owner.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE queue = 'default' AND state = 'dead'"
        ).fetchone()
        assert dead == (EXPIRED_SPENT,), "the spent leases were buried"


def test_without_sequential_scans_off_claims_kept_plan_would_scan_the_table(
    make_database: MakeDatabase,
) -> None:
    """The trap enable_seqscan = off avoids, shown: claim keeps the plan of its first
    call (plan_cache_mode = force_generic_plan), and without the setting the test
    above would fail. Shown on the full statement, planned at a first claim that
    buries a spent lease and kept for a later one that reclaims (a claim of a queue
    with no expired lease takes the common path, whose two steps find their rows by
    index either way)."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(
            "ALTER FUNCTION taskboard.claim(text, text, integer, interval) RESET enable_seqscan"
        )
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        worker.execute("SET ROLE taskboard_worker")
        # A spent lease, buried by the first claim: the full statement planned then.
        owner.execute(EXPIRED, ["default", 5, "-1 minute", 1])
        for _ in range(8):
            assert claim(worker, BATCH) == []
        owner.execute(GROW, [FINISHED_ROWS])
        owner.execute(EXPIRED, ["default", 1, "-1 minute", 1])
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [QUEUED_JOBS],
        )
        with worker.transaction():
            before = scans(worker)
            assert len(claim(worker, BATCH)) == BATCH
            after = scans(worker)
        assert after != before, (
            "claim found its rows without a scan even with sequential scans allowed"
        )


def test_complete_many_and_renew_many_fetch_their_own_rows_not_every_running_job(
    make_database: MakeDatabase,
) -> None:
    """Thousands of live leases in another queue: renew_many and complete_many of a batch,
    in a session begun on an empty table, fetch about the batch's rows, not every
    running job."""
    url = make_database(deploy=True)
    nobody = ["00000000-0000-0000-0000-000000000000"] * 2
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        worker.execute("SET ROLE taskboard_worker")
        for _ in range(8):  # the worker starts before any work arrives
            assert complete_many(worker, [1, 2], nobody) == [False, False]
            assert renew_many(worker, [1, 2], nobody) == [None, None]

        owner.execute(GROW, [FINISHED_ROWS])
        owner.execute(EXPIRED, ["other", 1, "1 hour", RUNNING_ELSEWHERE])
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [QUEUED_JOBS],
        )
        got = worker.execute(
            "SELECT job_id, token FROM taskboard.claim(queue => 'default', worker => 'w', batch => %s)",
            [BATCH],
        ).fetchall()
        ids, tokens = [r[0] for r in got], [str(r[1]) for r in got]
        assert len(got) == BATCH
        calls: dict[str, Callable[[psycopg.Connection, list[int], list[str]], list[object]]] = {
            "renew_many": renew_many,
            "complete_many": complete_many,  # type: ignore[dict-item]
        }
        for name, call in calls.items():
            answers, scanned, fetched = reads(worker, functools.partial(call, worker, ids, tokens))
            assert None not in answers and False not in answers, f"{name} refused its own batch"
            assert scanned == 0, f"{name} scanned taskboard.jobs {scanned} times"
            # The batch's rows, locked then written, and an accepted row asked
            # again: a few times the batch. Walking the running jobs: thousands.
            assert fetched < 4 * BATCH + 100 < RUNNING_ELSEWHERE, (
                f"{name} fetched {fetched} rows through indexes for a batch of {BATCH}"
            )

        # One job: complete_many's update by primary key.
        [(job_id, token)] = worker.execute(
            "SELECT job_id, token FROM taskboard.claim(queue => 'default', worker => 'w')"
        ).fetchall()
        one, scanned, fetched = reads(worker, lambda: complete_many(worker, [job_id], [str(token)]))
        assert one == [True]
        assert scanned == 0 and fetched <= 2, (
            f"complete_many of one job: {scanned} sequential scans, {fetched} rows fetched"
        )


def test_a_common_path_claim_fetches_its_batch_not_the_queued_backlog(
    make_database: MakeDatabase,
) -> None:
    """Thousands of queued jobs in the claimed queue, no limit, no expired lease: with the
    plan of an empty table, a claim of a batch fetches about the batch's rows, not every
    queued job of its queue."""
    url = make_database(deploy=True)
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        worker.execute("SET ROLE taskboard_worker")
        for _ in range(8):  # the worker starts before any work arrives
            assert claim(worker, BATCH) == []

        owner.execute(GROW, [FINISHED_ROWS])
        owner.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))",
            [RUNNING_ELSEWHERE],
        )
        got, scanned, fetched = reads(worker, lambda: claim(worker, BATCH))
        assert len(got) == BATCH
        assert scanned == 0, f"claim scanned taskboard.jobs {scanned} times"
        # The queued head, locked, then the claimed rows by id: a few times the
        # batch. Walking the queue's queued index: thousands.
        assert fetched < 4 * BATCH + 100 < RUNNING_ELSEWHERE, (
            f"claim fetched {fetched} rows through indexes for a batch of {BATCH}"
        )


LOG_SCANS = """
SELECT coalesce(sum(seq_scan), 0) FROM pg_catalog.pg_stat_xact_user_tables
 WHERE relid = 'taskboard.queue_starts'::regclass
"""


def test_a_claim_under_a_rate_limit_reads_its_window_and_head_not_the_backlog(
    make_database: MakeDatabase,
) -> None:
    """A rate limit per queue and one per key, their claimers begun on an empty table;
    then thousands of queued jobs over hundreds of keys, and thousands of starts of
    another queue in the log: a claim scans neither table, and fetches a few times its
    batch (per key, its sixteen times the room, twice), not the queue's backlog."""
    url = make_database(deploy=True)
    with (
        psycopg.connect(url, autocommit=True) as worker,
        psycopg.connect(url, autocommit=True) as owner,
    ):
        owner.execute("SELECT taskboard.set_rate_limit('default', 1000, '1 hour')")
        owner.execute("SELECT taskboard.set_rate_limit('keyed', 2, '1 hour', by_key => true)")
        worker.execute("SET ROLE taskboard_worker")

        def claim_of(queue: str) -> list[int]:
            rows = worker.execute(
                "SELECT job_id FROM taskboard.claim(queue => %s, worker => 'w', batch => %s)",
                [queue, BATCH],
            ).fetchall()
            return [r[0] for r in rows]

        for _ in range(8):  # the worker starts before any work arrives
            assert claim_of("default") == [] and claim_of("keyed") == []

        owner.execute(GROW, [FINISHED_ROWS])
        for queue in ("default", "keyed"):
            owner.execute(
                "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]), %s,"
                " concurrency_keys => (SELECT array_agg('k' || g %% 500) FROM generate_series(1, %s) AS g))",
                [RUNNING_ELSEWHERE, queue, RUNNING_ELSEWHERE],
            )
        owner.execute(
            "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
            " SELECT 'elsewhere', 'k' || g, clock_timestamp() FROM generate_series(1, 5000) AS g"
        )
        for queue in ("default", "keyed"):
            with worker.transaction():
                log_before = worker.execute(LOG_SCANS).fetchone()
                got, scanned, fetched = reads(worker, functools.partial(claim_of, queue))
                log_after = worker.execute(LOG_SCANS).fetchone()
            assert len(got) == BATCH, queue
            assert scanned == 0, f"a claim of {queue} scanned taskboard.jobs {scanned} times"
            assert log_before == log_after, f"a claim of {queue} scanned taskboard.queue_starts"
            # Per key a round reads its sixteen times the room twice: once for the
            # windows of the keys it reaches, once to pick.
            assert fetched < 36 * BATCH + 100 < RUNNING_ELSEWHERE, (
                f"a claim of {queue} fetched {fetched} rows through indexes for a batch of {BATCH}"
            )
