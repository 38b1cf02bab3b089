"""Bulk retry and cancel of a filtered set on the dashboard: one CSRF-checked POST, capped."""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from taskboard.sql import admin_async
from taskboard.web import server
from tests.support.database import connect
from tests.support.web import client


def dead_jobs(url: str, queue: str, count: int) -> list[int]:
    """`count` jobs of `queue` that failed their only attempt."""
    app = Taskboard(load_settings(database_url=url))
    try:
        ids = [app.enqueue("send", {"n": n}, queue=queue, max_attempts=1) for n in range(count)]
    finally:
        app.close()
    with connect(url, "taskboard_worker") as conn:
        for row in conn.execute("SELECT job_id, token FROM taskboard.claim(%s, 'w', 100)", [queue]):
            conn.execute("SELECT taskboard.fail(%s, %s, 'boom')", [row[0], row[1]])
    return ids


def states(url: str, ids: list[int]) -> list[str]:
    with connect(url, "taskboard_admin") as conn:
        return [
            str(conn.execute("SELECT state FROM taskboard.get_job(%s)", [i]).fetchone()[0])  # type: ignore[index]
            for i in ids
        ]


def confirmation(tb: TestClient, query: str) -> tuple[str, dict[str, str]]:
    """The confirmation page of `query` and the fields of its form."""
    page = tb.get(f"/bulk?{query}")
    assert page.status_code == 200, page.text
    form = re.search(
        r'<form method="post" action="/bulk" id="bulk-confirm">(.*?)</form>', page.text, re.S
    )
    assert form, page.text
    fields = {
        name: html.unescape(value)
        for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(1))
    }
    return page.text, fields


def test_the_dead_jobs_of_a_queue_are_retried_in_one_post_that_says_how_many(
    deployed: str, admin_url: str
) -> None:
    mail = dead_jobs(deployed, "mail", 3)
    other = dead_jobs(deployed, "other", 1)
    with client(admin_url) as tb:
        text, fields = confirmation(tb, "action=retry&queue=mail&state=dead")
        assert 'data-count="3"' in text
        assert f"At most {server.BULK_MAX} jobs per action" in text
        assert states(deployed, mail) == ["dead"] * 3, "showing the set changes nothing"
        done = tb.post("/bulk", data=fields)
        assert done.status_code == 303, done.text
        assert "notice=retried+3+of+3+jobs" in done.headers["location"]
        after = tb.get(done.headers["location"])
    assert "retried 3 of 3 jobs" in after.text and 'data-count="0"' in after.text
    assert states(deployed, mail) == ["queued"] * 3
    assert states(deployed, other) == ["dead"]


def test_the_confirmation_page_does_not_refresh_itself_while_other_pages_do(
    deployed: str, admin_url: str
) -> None:
    dead_jobs(deployed, "mail", 1)
    with client(admin_url) as tb:
        text, _ = confirmation(tb, "action=retry&queue=mail&state=dead")
        listing = tb.get("/jobs").text
    assert "not refreshed: what you confirm is what you read" in text
    assert "Live refresh" not in text and 'id="live-toggle"' not in text
    assert 'id="live-toggle"' in listing


def test_a_bulk_cancel_counts_only_the_jobs_it_changed(deployed: str, admin_url: str) -> None:
    app = Taskboard(load_settings(database_url=deployed))
    try:
        ids = [app.enqueue("send", {"n": n}, queue="mail") for n in range(2)]
    finally:
        app.close()
    with client(admin_url) as tb:
        _, fields = confirmation(tb, "action=cancel&queue=mail&state=queued")
        with connect(deployed, "taskboard_admin") as conn:
            conn.execute("SELECT taskboard.cancel(%s)", [ids[0]])  # someone else, meanwhile
        done = tb.post("/bulk", data=fields)
    assert "notice=cancelled+1+of+2+jobs" in done.headers["location"]
    assert states(deployed, ids) == ["cancelled", "cancelled"]


def test_a_bulk_post_without_the_csrf_token_changes_nothing(deployed: str, admin_url: str) -> None:
    mail = dead_jobs(deployed, "mail", 2)
    with client(admin_url) as tb:
        _, fields = confirmation(tb, "action=retry&queue=mail&state=dead")
        fields.pop("csrf")
        refused = tb.post("/bulk", data=fields)
    assert refused.status_code == 403
    assert states(deployed, mail) == ["dead", "dead"]


def test_the_bulk_page_without_a_choice_offers_the_form(admin_url: str) -> None:
    with client(admin_url) as tb:
        page = tb.get("/bulk")
    assert page.status_code == 200
    assert 'name="action"' in page.text and 'id="bulk-confirm"' not in page.text


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("action=delete&state=dead", "action must be retry or cancel"),
        ("action=retry&state=queued", "state must be dead or cancelled to retry"),
        ("action=cancel&queue=mail", "state must be waiting, queued or running to cancel"),
    ],
)
def test_a_bulk_page_with_bad_filters_is_a_400(admin_url: str, query: str, says: str) -> None:
    with client(admin_url) as tb:
        page = tb.get(f"/bulk?{query}")
    assert page.status_code == 400 and says in page.text


def test_a_bulk_post_past_the_cap_or_with_a_bad_id_is_a_400(deployed: str, admin_url: str) -> None:
    mail = dead_jobs(deployed, "mail", 1)
    with client(admin_url) as tb:
        _, fields = confirmation(tb, "action=retry&queue=mail&state=dead")
        too_many = tb.post(
            "/bulk", data={**fields, "ids": ",".join(str(i) for i in range(1, server.BULK_MAX + 2))}
        )
        not_an_id = tb.post("/bulk", data={**fields, "ids": "12,x"})
    assert too_many.status_code == 400 and f"at most {server.BULK_MAX} jobs" in too_many.text
    assert not_an_id.status_code == 400 and "job id must be a whole number" in not_an_id.text
    assert states(deployed, mail) == ["dead"]


def test_a_login_without_the_admin_role_gets_no_bulk_form_and_a_403(
    deployed: str, producer_url: str
) -> None:
    mail = dead_jobs(deployed, "mail", 1)
    with client(producer_url) as tb:
        page = tb.get("/bulk?action=retry&queue=mail&state=dead")
        assert page.status_code == 200 and 'id="bulk-confirm"' not in page.text
        token = re.search(r'name="csrf" value="([^"]+)"', tb.get("/").text)
        refused = tb.post(
            "/bulk",
            data={"csrf": token.group(1) if token else "", "action": "retry", "ids": str(mail[0])},
        )
    assert refused.status_code == 403
    assert states(deployed, mail) == ["dead"]


def test_the_bulk_page_lists_the_jobs_without_their_payloads(
    deployed: str, admin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 500 jobs of 4 MB would be 2 GB read and decoded at each 5-second refresh.
    mail = dead_jobs(deployed, "mail", 2)

    async def whole_jobs(*args: object) -> None:
        raise AssertionError("the bulk page read whole jobs (find_jobs)")

    monkeypatch.setattr(admin_async, "afind_jobs", whole_jobs)
    with client(admin_url) as tb:
        text, fields = confirmation(tb, "action=retry&queue=mail&state=dead")
    assert 'data-count="2"' in text
    assert fields["ids"] == ",".join(str(i) for i in sorted(mail, reverse=True))


def test_a_bulk_action_stopped_midway_says_how_many_it_changed(
    deployed: str, admin_url: str
) -> None:
    # Each call commits: a 503 "this page will try again" would hide the jobs
    # already cancelled, and the action would go unlogged.
    app = Taskboard(load_settings(database_url=deployed))
    try:
        ids = [app.enqueue("send", {"n": n}, queue="mail") for n in range(3)]
    finally:
        app.close()
    newest, middle, oldest = sorted(ids, reverse=True)
    with client(admin_url) as tb, connect(deployed, "taskboard_admin", autocommit=False) as held:
        _, fields = confirmation(tb, "action=cancel&queue=mail&state=queued")
        held.execute("SELECT taskboard.cancel(%s)", [middle])  # its row stays locked
        stopped = tb.post("/bulk", data=fields)
        held.rollback()
    assert stopped.status_code == 503, stopped.text
    assert f"cancelled 1 of 3 jobs, then stopped at job {middle} (" in html.unescape(
        stopped.text
    ), stopped.text
    assert "the other 2 were not changed" in stopped.text
    assert states(deployed, [newest, middle, oldest]) == ["cancelled", "queued", "queued"]


def test_a_job_named_twice_in_a_bulk_post_is_counted_once(deployed: str, admin_url: str) -> None:
    (job,) = dead_jobs(deployed, "mail", 1)
    with client(admin_url) as tb:
        _, fields = confirmation(tb, "action=retry&queue=mail&state=dead")
        done = tb.post("/bulk", data={**fields, "ids": f"{job},{job},{job}"})
    assert "notice=retried+1+of+1+jobs" in done.headers["location"]
