"""A job's history on its dashboard page: the lost attempt and the refused late write."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from taskboard.web import server
from tests.support.database import connect, expire
from tests.support.web import client


def stalled_worker_story(url: str) -> tuple[int, str, int]:
    """Worker A claims and stalls; its lease expires; B reclaims and fails once; A's late
    completion is refused. Returns the job id, A's token and A's fence."""
    app = Taskboard(load_settings(database_url=url))
    try:
        job_id = app.enqueue("send", {"to": "maya@example.com"}, queue="mail")
    finally:
        app.close()
    with connect(url, "taskboard_worker") as conn:
        row = conn.execute(
            "SELECT token, fence FROM taskboard.claim('mail', 'worker-a')"
        ).fetchone()
    assert row is not None
    token_a, fence_a = str(row[0]), int(row[1])
    expire(url, job_id)
    with connect(url, "taskboard_worker") as conn:
        row = conn.execute("SELECT token FROM taskboard.claim('mail', 'worker-b')").fetchone()
        assert row is not None
        refused = conn.execute(
            "SELECT completed FROM taskboard.complete_many(%s, %s, %s)",
            [[job_id], [token_a], ['{"sent": true}']],
        ).fetchone()
        assert refused == (False,)
        conn.execute("SELECT taskboard.fail(%s, %s, 'smtp timeout')", [job_id, row[0]])
    return job_id, token_a, fence_a


def test_the_job_page_names_the_lost_attempt_and_the_refused_completion(
    deployed: str, admin_url: str
) -> None:
    job_id, token_a, fence_a = stalled_worker_story(deployed)
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{job_id}")
    assert page.status_code == 200
    text = page.text
    reclaimed = text.index(
        'Lease expired on worker-a, reclaimed by worker-b <span class="muted">'
        "as role taskboard_worker</span>"
    )
    refused = text.index("Late complete by worker-a refused by the fence")
    failed = text.index("smtp timeout")
    assert reclaimed < refused < failed, "oldest first, the failed attempt interleaved"
    assert re.search(
        rf"refused by the fence</strong>\s*<span[^>]*>at [^<]*attempt 1, fence {fence_a}<", text
    )
    assert token_a not in text


def test_a_login_that_may_not_read_the_history_still_sees_the_job(
    deployed: str, producer_url: str
) -> None:
    job_id, _, _ = stalled_worker_story(deployed)
    with client(producer_url) as tb:
        page = tb.get(f"/jobs/{job_id}")
    assert page.status_code == 200
    assert "smtp timeout" in page.text and "reclaimed by" not in page.text


def test_the_timeline_puts_errors_and_history_in_time_order() -> None:
    utc = dt.UTC
    errors: list[Any] = [
        {"error": "first", "at": "2026-01-01T10:00:00+00:00"},
        {"error": "unreadable time", "at": "soon"},
        {"error": "third", "at": "2026-01-01T12:00:00+00:00"},
    ]
    history = [{"kind": "reclaimed", "at": dt.datetime(2026, 1, 1, 11, tzinfo=utc)}]
    got = server.timeline(errors, history)
    assert [item.get("error", item.get("event")) for item in got] == [
        errors[0],
        history[0],
        errors[2],
        errors[1],
    ]


def test_a_reclaim_names_the_role_in_force_and_keeps_the_worker_name_it_stated(
    deployed: str, admin_url: str
) -> None:
    """The actor of a reclaimed line is the role the claim ran as, not the worker name its
    caller passed; that name stays beside it."""
    job_id, _, _ = stalled_worker_story(deployed)
    with connect(deployed, "taskboard_admin") as conn:
        rows = conn.execute(
            "SELECT actor, actor_worker FROM taskboard.job_history(%s) WHERE kind = 'reclaimed'",
            [job_id],
        ).fetchall()
    assert rows == [("taskboard_worker", "worker-b")]
