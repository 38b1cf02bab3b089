"""Retention: workers whose login may prune (the admin role's) delete jobs that finished
longer ago than the `retention` setting, in batches, without two workers waiting on each
other; unfinished jobs and recent ones stay; `none` keeps everything. A worker login
without the admin role is told once and keeps every job."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

import psycopg
import pytest

from taskboard import ConfigError, load_settings
from taskboard.sql.schema import SUPPORTED_SCHEMA_VERSIONS
from taskboard_dev.server import as_user
from tests.support.database import MakeDatabase
from tests.support.inprocess import FAST, make_app

DEADLINE_SECONDS = 30.0


def exists(url: str, job_ids: list[int]) -> list[int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id FROM taskboard.jobs WHERE id = ANY(%s) ORDER BY id", [job_ids]
        ).fetchall()
    return [row[0] for row in rows]


def enqueue_jobs(url: str, count: int) -> list[int]:
    """`count` jobs of task noop on queue quiet, which no worker here claims from."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            int(conn.execute("SELECT taskboard.enqueue('noop', queue => 'quiet')").fetchone()[0])  # type: ignore[index]
            for _ in range(count)
        ]


def finish(url: str, job_ids: list[int], ago: str) -> None:
    """Mark the jobs cancelled, finished `ago` (an interval; negative: in the future)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE taskboard.jobs SET state = 'cancelled', "
            "finished_at = clock_timestamp() - %s::interval WHERE id = ANY(%s)",
            [ago, job_ids],
        )


async def run_workers(app: Any, count: int, until: Any, **overrides: Any) -> None:
    stop = asyncio.Event()
    workers = [
        asyncio.create_task(app.worker(stop=stop, worker_name=f"w{n}", **{**FAST, **overrides}))
        for n in range(count)
    ]
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while not await asyncio.to_thread(until):
            assert not any(w.done() for w in workers), "a worker ended by itself"
            assert time.monotonic() < deadline, "the condition did not hold in time"
            await asyncio.sleep(0.1)
    finally:
        stop.set()
        await asyncio.gather(*workers)


def test_two_workers_prune_old_finished_jobs_and_keep_the_rest(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    old = [app.enqueue("noop", queue="quiet") for _ in range(40)]
    kept = [app.enqueue("noop", queue="quiet") for _ in range(3)]
    finish(url, old, "2 hours")
    finish(url, kept[:1], "-1 hour")  # finished "recently" whatever the clock does
    # kept[1:] stay queued on a queue nobody claims from: unfinished

    with caplog.at_level(logging.INFO, logger="taskboard"):
        asyncio.run(
            run_workers(app, 2, lambda: not exists(url, old), queues=["other"], retention=4.0)
        )
    assert exists(url, kept) == sorted(kept), "a recent or unfinished job was pruned"
    pruned = [r for r in caplog.records if r.getMessage().startswith("retention: pruned")]
    assert sum(int(r.getMessage().split()[2]) for r in pruned) == len(old)
    assert not [r for r in caplog.records if r.getMessage().startswith("control:")]
    app.close()


def test_retention_none_keeps_every_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    old = [app.enqueue("noop", queue="quiet") for _ in range(3)]
    finish(url, old, "3650 days")
    settled = time.monotonic() + 2.5

    asyncio.run(
        run_workers(app, 1, lambda: time.monotonic() > settled, queues=["other"], retention="none")
    )
    assert exists(url, old) == sorted(old)
    app.close()


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_bad_retention_is_one_line(value: str) -> None:
    with pytest.raises(ConfigError, match="TASKBOARD_RETENTION"):
        load_settings(database_url="postgresql://x", retention=value)


def test_retention_defaults_to_a_week() -> None:
    assert load_settings(database_url="postgresql://x").retention == 7 * 86400
    assert load_settings(database_url="postgresql://x", retention="none").retention is None


@pytest.mark.parametrize("schema", ["oldest supported", "current"])
def test_a_login_that_may_not_prune_is_told_once_and_the_worker_goes_on(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture, schema: str
) -> None:
    """prune is the admin's alone (a worker login could claim, fail without retry and
    prune any due job), on each schema this driver supports."""
    if schema == "current":
        url = make_database(deploy=True)
    else:
        url = make_database(release=SUPPORTED_SCHEMA_VERSIONS[0])
    login = "rt_worker_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN IN ROLE taskboard_worker")
    old = enqueue_jobs(url, 1)
    finish(url, old, "10 days")
    try:
        app = make_app(as_user(url, login))
        ran: list[int] = []

        @app.task("note")
        def note(ctx: Any, payload: Any) -> None:
            ran.append(ctx.job_id)

        def told() -> bool:
            return any(r.getMessage().startswith("retention: this login") for r in caplog.records)

        job_id = app.enqueue("note")
        with caplog.at_level(logging.INFO, logger="taskboard"):
            asyncio.run(run_workers(app, 1, lambda: told() and bool(ran), retention=1.0))
        assert ran == [job_id]
        assert sum(r.getMessage().startswith("retention: this login") for r in caplog.records) == 1
        assert exists(url, old) == old, "a worker login without the admin role pruned"
        app.close()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {login}")
            conn.execute(f"DROP ROLE {login}")


def test_a_worker_login_granted_the_admin_role_prunes(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    login = "rt_pruner_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN IN ROLE taskboard_worker, taskboard_admin")
    old = enqueue_jobs(url, 3)
    finish(url, old, "10 days")
    try:
        app = make_app(as_user(url, login))
        with caplog.at_level(logging.INFO, logger="taskboard"):
            asyncio.run(run_workers(app, 1, lambda: not exists(url, old), retention=4.0))
        assert not any(r.getMessage().startswith("retention: this login") for r in caplog.records)
        app.close()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {login}")
            conn.execute(f"DROP ROLE {login}")


RECENT_FINISHED = 50_000


def test_a_prune_with_nothing_old_enough_reads_none_of_the_recent_finished_jobs(
    make_database: MakeDatabase,
) -> None:
    """Every worker prunes about once a minute on its control connection; in the steady state
    of a retention nothing is old enough, and a week of finished jobs is all recent. The
    cutoff must bound the index scan (a local, not clock_timestamp() per row, which no index
    can use): otherwise each call reads every finished job the retention keeps."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO taskboard.jobs (queue, task, state, attempt, max_attempts, run_at,"
            " finished_at) SELECT 'bulk', 't', 'succeeded', 1, 5, clock_timestamp(),"
            " clock_timestamp() - interval '1 day' + g * interval '1 ms'"
            " FROM generate_series(1, %s) AS g",
            [RECENT_FINISHED],
        )
        conn.execute("ANALYZE taskboard.jobs")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT taskboard.prune('7 days', 1000)").fetchone() == (0,)
        row = conn.execute(
            "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
            "  FROM pg_stat_xact_user_tables WHERE relid = 'taskboard.jobs'::regclass"
        ).fetchone()
    assert row is not None
    assert row[0] < RECENT_FINISHED / 100, f"a prune that deleted nothing read {row[0]} jobs"


def test_a_retention_past_the_calendar_is_refused_by_name(make_database: MakeDatabase) -> None:
    """clock - older_than must be a time PostgreSQL can hold (4713 BC at the earliest)."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        job_id = conn.execute("SELECT taskboard.enqueue('t')").fetchone()
        assert job_id is not None
        conn.execute("SELECT taskboard.cancel(%s)", job_id)
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="older_than"):
            conn.execute("SELECT taskboard.prune(interval '10000 years')")
    with pytest.raises(ConfigError, match="TASKBOARD_RETENTION"):
        load_settings(database_url="postgresql://x", retention="1e14")
