"""The dashboard on a retry backlog: the job list reads one summary line a job (never a
payload, result or errors) and the overview counts only the failures within its hour,
however many old ones the unfinished jobs carry."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from taskboard.sql import admin_async, parameters
from taskboard.sql import dashboard as sql_dashboard
from tests.support.database import connect
from tests.support.web import client

LINE_COLUMNS = {
    "job_id",
    "queue",
    "task",
    "state",
    "attempt",
    "max_attempts",
    "priority",
    "run_at",
    "created_at",
    "started_at",
    "finished_at",
    "failures",
    "last_error",
}
BIG = "x" * 200_000

# Unfinished jobs queued for their next attempt, each with 5 errors hours old.
OLD_BACKLOG = """
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, attempt, max_attempts, errors)
SELECT 'backlog', 'sync', '{}', 'queued', now(), 5, 10,
       (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'error', 'old failure', 'attempt', a, 'worker', 'w',
                   'at', now() - interval '6 hours' + a * interval '10 minutes'))
          FROM pg_catalog.generate_series(1, 5) AS a)
  FROM pg_catalog.generate_series(1, %s) AS g
"""


def big_failed_job(url: str) -> int:
    """A job with a 200 kB payload that failed once ('boom') and then succeeded with a
    200 kB result."""
    with connect(url, "taskboard_producer") as conn:
        row = conn.execute(
            "SELECT taskboard.enqueue('report', pg_catalog.jsonb_build_object('blob', %s::text),"
            " 'big')",
            [BIG],
        ).fetchone()
    assert row is not None
    job_id = int(row[0])
    with connect(url, "taskboard_worker") as conn:
        conn.execute(
            "SELECT taskboard.fail(c.job_id, c.token, 'boom', retry_in => interval '1 ms')"
            " FROM taskboard.claim('big', 'w') AS c"
        )
        conn.execute("SELECT pg_sleep(0.01)")
        conn.execute(
            "SELECT taskboard.complete(c.job_id, c.token,"
            " pg_catalog.jsonb_build_object('blob', %s::text))"
            " FROM taskboard.claim('big', 'w') AS c",
            [BIG],
        )
    return job_id


def summary_lines(url: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            params = parameters.find_jobs_params("big", None, None, None, 50)
            return await sql_dashboard.afind_jobs_summary(conn, params)

    return asyncio.run(read())


def test_the_lists_call_returns_a_line_without_payload_result_or_errors(
    deployed: str, admin_url: str
) -> None:
    job_id = big_failed_job(deployed)
    lines = summary_lines(admin_url)
    assert [line["job_id"] for line in lines] == [job_id]
    (line,) = lines
    assert set(line) == LINE_COLUMNS
    assert (line["state"], line["failures"], line["last_error"]) == ("succeeded", 1, "boom")
    assert BIG not in repr(line)


def test_the_job_list_never_calls_find_jobs_and_shows_the_last_error(
    deployed: str, admin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id = big_failed_job(deployed)

    async def refused(*args: Any) -> None:
        raise AssertionError("the job list read whole jobs (find_jobs)")

    monkeypatch.setattr(admin_async, "afind_jobs", refused)
    with client(admin_url) as tb:
        page = tb.get("/jobs?queue=big")
        assert page.status_code == 200
        assert f'data-job="{job_id}"' in page.text and "boom" in page.text
        assert "xxxxxxxxxx" not in page.text
        job = tb.get(f"/jobs/{job_id}")  # the job's page still has the whole job
        assert job.status_code == 200 and "xxxxxxxxxx" in job.text


def test_the_overview_counts_only_the_failures_within_its_hour(
    deployed: str, admin_url: str
) -> None:
    with psycopg.connect(deployed, autocommit=True) as conn:
        conn.execute("SET ROLE taskboard_owner")
        conn.execute(OLD_BACKLOG, [500])
    big_failed_job(deployed)  # one failure within the hour
    with client(admin_url) as tb:
        page = tb.get("/")
    assert page.status_code == 200
    assert 'data-queue="backlog"' in page.text
    assert '<div class="big alert" id="total-failed">1</div>' in page.text
