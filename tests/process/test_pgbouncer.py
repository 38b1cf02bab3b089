"""Behind PgBouncer in transaction mode, with the settings docs/guides/production.md documents.

A PgBouncer of our own (taskboard_dev.bouncer: transaction pooling, every
server connection reset after each transaction, as a pool that hands
sessions other server connections does to them) sits in front of the test
server. A worker with psycopg's prepared statements exits at start-up
saying which setting fixes it. With `TASKBOARD_PREPARE_THRESHOLD=none` and
LISTEN on a direct connection (`TASKBOARD_LISTEN_URL`), enqueue, a worker
with plain and transactional tasks, and the story of db/tests/95-story.sql
all work through the pooler.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from taskboard import Taskboard, load_settings
from taskboard_dev.bouncer import Bouncer
from tests.support import TESTS_DIR
from tests.support.database import MakeDatabase
from tests.support.processes import Workers, create_ledger, enqueue, wait_for_job

DB_TESTS = Path(__file__).resolve().parents[2] / "db" / "tests"

TASKBOARD = Path(sys.executable).parent / "taskboard"
APP = "apps.cli_app:app"
DEADLINE_SECONDS = 60.0


@pytest.fixture
def bouncer(server_url: str) -> Iterator[Bouncer]:
    """A PgBouncer in transaction mode in front of the test server (taskboard_dev.bouncer)."""
    with Bouncer(server_url) as started:
        yield started


def through(bouncer: Bouncer, url: str) -> str:
    return bouncer.url(urlsplit(url).path.lstrip("/"))


def worker(url: str, **settings: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    env.update({f"TASKBOARD_{k.upper()}": v for k, v in settings.items()})
    return subprocess.Popen(
        [str(TASKBOARD), "worker", APP, "--pool-size=3", "--worker-name=bounced"],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_worker_behind_a_transaction_pooler_says_to_turn_prepared_statements_off(
    make_database: MakeDatabase, bouncer: Bouncer
) -> None:
    url = make_database(deploy=True)
    proc = worker(through(bouncer, url), listen_url=url)
    _, stderr = proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == 1, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("taskboard: error: prepared statements are lost"), lines[0]
    assert "TASKBOARD_PREPARE_THRESHOLD=none" in lines[0]


def test_worker_behind_a_transaction_pooler_works_without_prepared_statements(
    make_database: MakeDatabase, bouncer: Bouncer
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT taskboard.enqueue('cli-echo', '{\"n\": 7}', queue => 'cli')"
        ).fetchone()
        assert row is not None
        job_id = int(row[0])
    proc = worker(through(bouncer, url), prepare_threshold="none", listen_url=url)
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            with psycopg.connect(url, autocommit=True) as conn:
                state = conn.execute(
                    "SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]
                ).fetchone()
            if state == ("succeeded",):
                break
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the job did not finish behind the pooler"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_enqueue_through_a_transaction_pooler(
    make_database: MakeDatabase, bouncer: Bouncer
) -> None:
    """Sync and async, one and many, own connection and the caller's transaction."""
    url = make_database(deploy=True)
    pooled = through(bouncer, url)
    app = Taskboard(load_settings(database_url=pooled, prepare_threshold=None))
    ids = [app.enqueue("t", {"n": 1}), *app.enqueue_many("t", [{"n": 2}, {"n": 3}])]
    with psycopg.connect(pooled, prepare_threshold=None) as conn:
        ids.append(app.enqueue("t", {"n": 4}, conn=conn))
        conn.rollback()  # the caller's transaction decides
        ids.append(app.enqueue("t", {"n": 5}, conn=conn))
        conn.commit()

    async def more() -> list[int]:
        one = await app.aenqueue("t", {"n": 6})
        many = await app.aenqueue_many("t", [{"n": 7}, {"n": 8}])
        await app.aclose()
        return [one, *many]

    ids += asyncio.run(more())
    app.close()
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT payload->>'n' FROM taskboard.jobs ORDER BY id").fetchall()
    assert [int(n) for (n,) in rows] == [1, 2, 3, 5, 6, 7, 8]


def test_worker_runs_plain_and_transactional_tasks_through_a_transaction_pooler(
    make_database: MakeDatabase, bouncer: Bouncer, tmp_path: Path
) -> None:
    url = make_database(deploy=True)
    create_ledger(url)
    jobs = {task: enqueue(url, task) for task in ("work", "work_sync", "ledger")}
    workers = Workers(tmp_path)
    try:
        w = workers.start(
            through(bouncer, url), "bounced", prepare_threshold="none", listen_url=url
        )
        for task, job_id in jobs.items():
            wait_for_job(url, job_id, f"{task} to succeed", lambda r: r["state"] == "succeeded")
        counts = w.terminate()
    finally:
        workers.close()
    assert (counts["succeeded"], counts["lost"], counts["stale"]) == (3, 0, 0)
    with psycopg.connect(url, autocommit=True) as conn:
        ledger = conn.execute("SELECT job_id FROM public.ledger").fetchall()
    assert ledger == [(jobs["ledger"],)]


def test_the_story_runs_through_a_transaction_pooler(
    make_database: MakeDatabase, bouncer: Bouncer
) -> None:
    """db/tests/95-story.sql, the stalled-worker story in pgTAP, through the pooler."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
    database = urlsplit(url).path.lstrip("/")
    done = subprocess.run(
        ["pg_prove", "--failures", str(DB_TESTS / "95-story.sql")],
        env=bouncer.libpq_env(database),
        capture_output=True,
        text=True,
        timeout=DEADLINE_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All tests successful" in done.stdout, done.stdout
