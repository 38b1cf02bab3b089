"""Jobs waiting for other jobs on the dashboard (schema 0.5.0 on): each queue's count in
the overview, the state in the job list's filter, and cancel, one job or in bulk; an older
schema's overview has no such column."""

from __future__ import annotations

import html
import re

from taskboard.web import server
from tests.support.database import MakeDatabase, connect, login_role
from tests.support.web import client


def waiting_jobs(url: str, queue: str, count: int) -> tuple[int, list[int]]:
    """A queued job of `queue`, and `count` jobs of it waiting for that one."""
    with connect(url, "taskboard_producer") as conn:
        first = conn.execute("SELECT taskboard.enqueue('send', '{}', %s)", [queue]).fetchone()
        assert first is not None
        ids = [
            conn.execute(
                "SELECT taskboard.enqueue('send', '{}', %s, depends_on => %s)", [queue, [first[0]]]
            ).fetchone()
            for _ in range(count)
        ]
    return int(first[0]), [int(row[0]) for row in ids if row is not None]


def states(url: str, ids: list[int]) -> list[str]:
    with connect(url, "taskboard_admin") as conn:
        return [
            str(conn.execute("SELECT state FROM taskboard.get_job(%s)", [i]).fetchone()[0])  # type: ignore[index]
            for i in ids
        ]


def waiting_cell(page: str, queue: str) -> str:
    row = re.search(rf'<tr data-queue="{re.escape(queue)}">(.*?)</tr>', page, re.S)
    assert row, f"queue {queue} is not listed"
    found = re.search(r'<td class="num waiting">(.*?)</td>', row.group(1), re.S)
    assert found, f"queue {queue} has no waiting cell"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


def test_the_overview_counts_each_queues_waiting_jobs_and_links_to_them(
    deployed: str, admin_url: str
) -> None:
    first, waiting = waiting_jobs(deployed, "build", 2)
    waiting_jobs(deployed, "other", 0)
    with client(admin_url) as tb:
        page = tb.get("/").text
        listed = tb.get("/jobs?queue=build&state=waiting").text
    assert '<th class="num">Waiting</th>' in page
    assert waiting_cell(page, "build") == "2"
    assert waiting_cell(page, "other") == "0"
    assert 'href="/jobs?queue=build&amp;state=waiting"' in page
    assert '<option value="waiting" selected>' in listed
    for job_id in waiting:
        assert f'href="/jobs/{job_id}"' in listed
    assert f'href="/jobs/{first}"' not in listed


def test_a_waiting_job_is_cancelled_from_its_page_and_in_bulk(
    deployed: str, admin_url: str
) -> None:
    _, (one, *rest) = waiting_jobs(deployed, "build", 3)
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{one}").text
        assert 'class="state waiting"' in page
        assert f'action="/jobs/{one}/cancel"' in page
        bulk = tb.get("/bulk?action=cancel&queue=build&state=waiting")
        assert bulk.status_code == 200 and 'data-count="3"' in bulk.text
        assert states(deployed, [one, *rest]) == ["waiting"] * 3, "showing changes nothing"
        form = re.search(
            r'<form method="post" action="/bulk" id="bulk-confirm">(.*?)</form>', bulk.text, re.S
        )
        assert form, bulk.text
        fields = {
            name: html.unescape(value)
            for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(1))
        }
        done = tb.post("/bulk", data=fields)
    assert "cancel to waiting, queued and running ones" in bulk.text
    assert server.BULK_STATES["cancel"] == ("waiting", "queued", "running")
    assert "notice=cancelled+3+of+3+jobs" in done.headers["location"]
    assert states(deployed, [one, *rest]) == ["cancelled"] * 3


def test_a_schema_older_than_this_driver_supports_is_a_page_that_says_to_migrate(
    make_database: MakeDatabase,
) -> None:
    url = make_database(release="0.4.9")
    with login_role(url, "taskboard_admin") as login, client(login) as tb:
        response = tb.get("/")
    assert response.status_code == 503, response.text
    assert "version 0.4.9" in response.text and "run `taskboard migrate`" in response.text
