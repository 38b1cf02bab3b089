"""A time PostgreSQL stores and Python's datetime cannot hold (a BC or year-10000 run_at or
slot) does not make the reads for people fail: the command, the exporter and the
dashboard's reads show it as PostgreSQL prints it, and every other row as before."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import pickle
from typing import Any

import psycopg
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from taskboard import metrics
from taskboard.sql import admin_async, parameters
from taskboard.sql import dashboard as sql_dashboard
from taskboard.sql.loaders import UnreadableTime
from tests.support.cli import run
from tests.support.database import MakeDatabase

BC = "0044-03-15 BC"
LATE = "10000-01-01"


@pytest.fixture
def odd(make_database: MakeDatabase) -> dict[str, Any]:
    """A database with a job due in 44 BC, one due in the year 10000 and a normal one,
    and schedules whose last slots are those two times, written as the superuser."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET timezone = 'UTC'")
        ids = []
        for queue, when in (("odd", BC), ("odd", LATE), ("fine", "now")):
            row = conn.execute(
                "INSERT INTO taskboard.jobs (queue, task, payload, run_at, max_attempts)"
                " VALUES (%s, 't', '{}', %s, 5) RETURNING id",
                [queue, when],
            ).fetchone()
            assert row is not None
            ids.append(row[0])
        conn.execute(
            "INSERT INTO taskboard.schedule_slots (schedule, last_slot, last_job_id)"
            " VALUES ('ides', %s, %s), ('far', %s, NULL)",
            [BC, ids[0], LATE],
        )
    return {"url": url, "bc": ids[0], "late": ids[1], "fine": ids[2]}


def test_the_command_reads_every_row_with_a_time_python_cannot_hold(odd: dict[str, Any]) -> None:
    url = odd["url"]
    status = run(url, "status")
    assert status.returncode == 0, status.stderr
    assert "0044-03-15" in status.stdout and "BC" in status.stdout

    jobs = run(url, "jobs")
    assert jobs.returncode == 0, jobs.stderr
    lines = jobs.stdout.splitlines()
    assert len(lines) == 4, jobs.stdout
    assert "10000-01-01" in jobs.stdout and "BC" in jobs.stdout

    listed = json.loads(run(url, "jobs", "--json").stdout)
    by_id = {job["job_id"]: job for job in listed}
    assert by_id[odd["late"]]["run_at"].startswith("10000-01-01 00:00:00")
    assert by_id[odd["bc"]]["run_at"].endswith(" BC")
    dt.datetime.fromisoformat(by_id[odd["fine"]]["run_at"])  # the others as before

    job = run(url, "job", str(odd["bc"]))
    assert job.returncode == 0, job.stderr
    assert "0044-03-15 00:00:00+00 BC" in job.stdout

    schedules = run(url, "schedules", "--json")
    assert schedules.returncode == 0, schedules.stderr
    slots = {row["schedule"]: row["last_slot"] for row in json.loads(schedules.stdout)}
    assert slots == {"ides": "0044-03-15 00:00:00+00 BC", "far": "10000-01-01 00:00:00+00"}


def test_the_exporter_keeps_every_queue_with_a_time_python_cannot_hold(
    odd: dict[str, Any],
) -> None:
    registry = metrics.exporter_registry(lambda: psycopg.connect(odd["url"], autocommit=True))
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for sample in family.samples
    }
    assert samples[("taskboard_exporter_database_up", ())] == 1
    assert samples[("taskboard_queue_jobs", (("queue", "odd"), ("state", "queued")))] == 2
    assert samples[("taskboard_queue_jobs", (("queue", "fine"), ("state", "queued")))] == 1
    # Due since 44 BC: as old as a datetime can say, not a missing gauge.
    age = samples[("taskboard_queue_oldest_queued_age_seconds", (("queue", "odd"),))]
    assert age > 2000 * 365 * 86400


def test_the_dashboards_reads_keep_every_row_with_a_time_python_cannot_hold(
    odd: dict[str, Any],
) -> None:
    async def read() -> dict[str, Any]:
        async with await psycopg.AsyncConnection.connect(odd["url"], autocommit=True) as conn:
            recent = dt.timedelta(hours=1)
            return {
                "overview": await sql_dashboard.aqueue_overview(conn, recent),
                "activity": await sql_dashboard.ajob_activity(conn, recent),
                "schedules": await sql_dashboard.aschedules(conn),
                "jobs": await admin_async.afind_jobs(
                    conn, parameters.find_jobs_params(None, None, None, None, 50)
                ),
                "job": await admin_async.aget_job(conn, parameters.job_params(odd["late"])),
            }

    got = asyncio.run(read())
    assert {row["queue"] for row in got["overview"]} == {"odd", "fine"}
    assert {row["schedule"] for row in got["schedules"]} == {"ides", "far"}
    assert len(got["jobs"]) == 3
    late = got["job"].run_at
    assert isinstance(late, UnreadableTime)
    assert late.isoformat().startswith("10000-01-01 00:00:00")
    assert late > dt.datetime.now(dt.UTC), "it sorts after every time Python can hold"


def test_the_dashboards_pages_show_a_time_python_cannot_hold_as_postgresql_prints_it(
    odd: dict[str, Any],
) -> None:
    from starlette.testclient import TestClient

    from taskboard.settings import load_settings
    from taskboard.web import server

    app = server.create_app(load_settings(database_url=odd["url"]))
    with TestClient(app, base_url="http://127.0.0.1:8080") as tb:
        for path in ("/", "/jobs", "/schedules", f"/jobs/{odd['fine']}"):
            assert tb.get(path).status_code == 200, path
        bc = tb.get(f"/jobs/{odd['bc']}")
        late = tb.get(f"/jobs/{odd['late']}")
        schedules = tb.get("/schedules")
    assert bc.status_code == 200 and "0044-03-15 00:00:00+00 BC" in bc.text
    assert late.status_code == 200 and "10000-01-01 00:00:00+00" in late.text
    assert "0044-03-15 00:00:00+00 BC" in schedules.text


def test_an_unreadable_time_orders_prints_and_pickles_as_postgresql_said() -> None:
    early = UnreadableTime.of("0044-03-15 00:00:00+00 BC")
    late = UnreadableTime.of("infinity")
    now = dt.datetime.now(dt.UTC)
    assert early < now < late
    assert (str(early), early.isoformat(sep=" ", timespec="seconds")) == (early.text,) * 2
    assert UnreadableTime.of("-infinity") < now
    assert pickle.loads(pickle.dumps(late)).text == "infinity"
