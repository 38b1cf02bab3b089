"""The dashboard's workers page: who holds what, since when, leases close to expiry."""

from __future__ import annotations

import re

import psycopg

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from tests.support.database import connect, expire
from tests.support.web import client


def claim(url: str, worker: str, lease: str) -> tuple[int, str]:
    with connect(url, "taskboard_worker") as conn:
        row = conn.execute(
            "SELECT job_id, token FROM taskboard.claim('mail', %s, 1, %s::interval)",
            [worker, lease],
        ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def ends_in(url: str, job_id: int, *, seconds: int) -> None:
    """Move a lease's deadline to `seconds` from now, as the table owner does in tests."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET ROLE taskboard_owner")
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() + make_interval(secs => %s)"
            " WHERE id = %s",
            [seconds, job_id],
        )


def row_of(page: str, job_id: int) -> str:
    found = re.search(rf'<tr data-worker="[^"]*" data-job="{job_id}"[^>]*>.*?</tr>', page, re.S)
    assert found, page
    return found.group(0)


def test_the_workers_page_shows_who_holds_what_and_which_leases_end_soon_or_ended(
    deployed: str, admin_url: str
) -> None:
    app = Taskboard(load_settings(database_url=deployed))
    try:
        queued = [app.enqueue("send", {"n": n}, queue="mail") for n in range(4)]
    finally:
        app.close()
    stalled, token_a = claim(deployed, "worker-a", "60 seconds")
    ending, token_b = claim(deployed, "worker-b", "10 minutes")
    long, _ = claim(deployed, "worker-b", "10 minutes")
    expire(deployed, stalled)  # worker-a stalled: nobody reclaimed it yet
    with client(admin_url) as tb:
        ends_in(deployed, ending, seconds=10)  # just before the page reads it
        page = tb.get("/workers")
    assert page.status_code == 200
    text = page.text
    assert 'class="expired"' in row_of(text, stalled) and "expired" in row_of(text, stalled)
    assert 'class="soon"' in row_of(text, ending) and "ends soon" in row_of(text, ending)
    assert 'class=""' in row_of(text, long)
    assert 'data-worker="worker-b"' in row_of(text, long)
    assert 'worker-b</strong> <span class="muted">(2 held)' in text
    assert f'data-job="{queued[3]}"' not in text, "a queued job is held by nobody"
    assert token_a not in text and token_b not in text


def test_a_login_without_the_admin_role_is_told_which_role_lists_the_workers(
    producer_url: str,
) -> None:
    with client(producer_url) as tb:
        page = tb.get("/workers")
    assert page.status_code == 403 and "taskboard_admin" in page.text


def test_no_running_job_says_so(admin_url: str) -> None:
    with client(admin_url) as tb:
        page = tb.get("/workers")
    assert page.status_code == 200 and "No job is running." in page.text


def test_a_job_cancelled_under_a_live_lease_is_listed_marked_cancelled(
    deployed: str, admin_url: str
) -> None:
    """Its worker may still be at work until the lease ends: /workers lists it."""
    app = Taskboard(load_settings(database_url=deployed))
    try:
        app.enqueue("send", {}, queue="mail")
        app.enqueue("send", {}, queue="mail")
        held, _ = claim(deployed, "worker-c", "10 minutes")
        other, _ = claim(deployed, "worker-c", "10 minutes")
        assert app.cancel(held)
    finally:
        app.close()
    with client(admin_url) as tb:
        text = tb.get("/workers").text
    cancelled = row_of(text, held)
    assert 'data-state="cancelled"' in cancelled
    assert '<span class="state cancelled">cancelled</span>' in cancelled
    assert 'data-state="cancelled"' not in row_of(text, other)
    assert 'worker-c</strong> <span class="muted">(2 held)' in text
