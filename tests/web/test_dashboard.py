"""The dashboard's pages and actions over HTTP, against a real database.

Starlette's TestClient drives the ASGI app in-process; the database is real
and every action goes through the SQL API. What a browser does (clicking,
live refresh) is in test_dashboard_browser.py.
"""

from __future__ import annotations

import datetime as dt
import html
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import psycopg
import pytest
from psycopg import conninfo, sql
from starlette.testclient import TestClient

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from taskboard.web import chart, security, server, tracebacks
from tests.support import TESTS_DIR
from tests.support.database import MakeDatabase, connect, expire
from tests.support.web import client, free_port, wait_until_up

TASKBOARD = Path(sys.executable).parent / "taskboard"
ACTION_FORM = re.compile(r'<form[^>]*method="post"')
# The pool retries at about 1, 3, 7, 15, 31 and 63 s: back at 35 s, its next attempt is
# over ten seconds (the pool's own wait for a connection) away.
OUTAGE_SECONDS = 35


def enqueue(url: str, task: str = "send", queue: str = "mail", **kwargs: Any) -> int:
    app = Taskboard(load_settings(database_url=url))
    try:
        return app.enqueue(task, kwargs.pop("payload", {"to": "maya@example.com"}), queue=queue)
    finally:
        app.close()


def state_of(url: str, job_id: int) -> str:
    with connect(url, "taskboard_admin") as conn:
        row = conn.execute("SELECT state FROM taskboard.get_job(%s)", [job_id]).fetchone()
    assert row is not None
    return str(row[0])


def paused(url: str, queue: str) -> bool:
    with connect(url, "taskboard_admin") as conn:
        rows = conn.execute(
            "SELECT paused FROM taskboard.queue_overview() WHERE queue = %s", [queue]
        ).fetchall()
    return bool(rows and rows[0][0])


def csrf_of(tb: TestClient, page: str = "/") -> str:
    """Load a page (which sets the CSRF cookie) and return the token its forms carry."""
    response = tb.get(page)
    assert response.status_code == 200, response.text
    found = re.search(r'name="csrf" value="([^"]+)"', response.text)
    assert found, "the page has no form"
    return found.group(1)


# -- pages -------------------------------------------------------------------------


def test_every_page_answers_and_shows_the_job(deployed: str, admin_url: str) -> None:
    job_id = enqueue(deployed, payload={"invoice": 4242})
    with client(admin_url) as tb:
        overview = tb.get("/")
        assert overview.status_code == 200
        assert 'data-queue="mail"' in overview.text
        assert "<svg" in overview.text
        jobs = tb.get("/jobs?queue=mail")
        assert f'data-job="{job_id}"' in jobs.text
        job = tb.get(f"/jobs/{job_id}")
        assert job.status_code == 200
        assert "4242" in job.text and ">queued<" in job.text
        assert tb.get("/schedules").status_code == 200
        # The id box jumps to the job.
        jump = tb.get(f"/jobs?id={job_id}")
        assert (jump.status_code, jump.headers["location"]) == (303, f"/jobs/{job_id}")


def test_a_waiting_job_page_shows_what_it_waits_for_and_its_concurrency_key(
    deployed: str, admin_url: str
) -> None:
    app = Taskboard(load_settings(database_url=deployed))
    try:
        first = app.enqueue("send", {}, queue="mail")
        waiting = app.enqueue(
            "send", {}, queue="mail", depends_on=[first], concurrency_key="customer-7"
        )
    finally:
        app.close()
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{waiting}").text
        head = tb.get(f"/jobs/{first}").text
    waits = re.search(r'<dd id="waiting-for">(.*?)</dd>', page)
    assert waits and waits.group(1) == f'<a href="/jobs/{first}">{first}</a>'
    assert '<dd id="concurrency-key">customer-7</dd>' in page
    assert 'id="waiting-for"' not in head
    assert '<dd id="concurrency-key"><span class="muted">none</span></dd>' in head


def test_a_job_whose_lease_expired_on_its_last_attempt_shows_it(
    deployed: str, admin_url: str
) -> None:
    """claim's own error entry, 'lease expired', has no traceback."""
    app = Taskboard(load_settings(database_url=deployed))
    try:
        job_id = app.enqueue("send", {}, queue="mail", max_attempts=1)
    finally:
        app.close()
    with connect(deployed, "taskboard_worker") as conn:
        conn.execute("SELECT taskboard.claim('mail', 'w', 1)")
    expire(deployed, job_id)
    with connect(deployed, "taskboard_worker") as conn:
        conn.execute("SELECT taskboard.claim('mail', 'w', 1)")  # buries it
    assert state_of(deployed, job_id) == "dead"
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{job_id}")
        listed = tb.get("/jobs?state=dead")
    assert page.status_code == 200
    assert "lease expired" in page.text and 'class="traceback"' not in page.text
    assert listed.status_code == 200 and "lease expired" in listed.text


def test_the_token_is_never_on_a_page(deployed: str, admin_url: str) -> None:
    job_id = enqueue(deployed)
    with connect(deployed, "taskboard_worker") as conn:
        row = conn.execute("SELECT token FROM taskboard.claim('mail', 'w', 1)").fetchone()
    assert row is not None
    token = str(row[0])
    with client(admin_url) as tb:
        for page in ("/", "/jobs", f"/jobs/{job_id}", "/jobs?state=running"):
            assert token not in tb.get(page).text, page


def test_jobs_are_paged_by_id_newest_first(deployed: str, admin_url: str) -> None:
    app = Taskboard(load_settings(database_url=deployed))
    try:
        ids = app.enqueue_many("send", [{"n": n} for n in range(server.PAGE + 5)], queue="paged")
    finally:
        app.close()
    with client(admin_url) as tb:
        first = tb.get("/jobs?queue=paged")
        shown = [int(i) for i in re.findall(r'data-job="(\d+)"', first.text)]
        assert shown == sorted(ids, reverse=True)[: server.PAGE]
        older = re.search(r'href="([^"]+)" id="older"', first.text)
        assert older, "a next page is offered"
        second = tb.get(older.group(1).replace("&amp;", "&"))
        rest = [int(i) for i in re.findall(r'data-job="(\d+)"', second.text)]
        assert rest == sorted(ids, reverse=True)[server.PAGE :]
        assert 'id="older"' not in second.text


@pytest.mark.parametrize(
    ("page", "status", "says"),
    [
        ("/jobs?state=finished", 400, "state must be one of"),
        ("/jobs?after=abc", 400, "after must be a whole number"),
        ("/jobs?id=12x", 400, "job id must be a whole number"),
        ("/jobs/99999999999999999999", 400, "out of range"),
        ("/jobs/424242", 404, "job 424242 does not exist"),
    ],
)
def test_bad_input_is_one_clear_error(admin_url: str, page: str, status: int, says: str) -> None:
    with client(admin_url) as tb:
        response = tb.get(page)
    assert response.status_code == status
    assert says in html.unescape(response.text)


def test_an_unreachable_database_is_a_page_that_says_so(
    make_database: MakeDatabase, server_url: str
) -> None:
    url = make_database(deploy=True)
    name = conninfo.conninfo_to_dict(url)["dbname"]
    with client(url) as tb:
        assert tb.get("/").status_code == 200
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name]
            )
        try:
            response = tb.get("/")
            assert response.status_code == 503
            # The dropped connection is replaced; no new one can be made in time.
            assert "no database connection in time (is the database up?)" in response.text
        finally:
            with psycopg.connect(server_url, autocommit=True) as conn:
                conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')


# -- actions -----------------------------------------------------------------------


def test_an_admin_pauses_resumes_and_limits_a_queue(deployed: str, admin_url: str) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        token = csrf_of(tb)
        done = tb.post("/queues/pause", data={"csrf": token, "queue": "mail", "next": "/"})
        assert done.status_code == 303
        assert "notice=queue+mail+paused" in done.headers["location"]
        assert paused(deployed, "mail")
        assert ">paused<" in tb.get("/").text
        tb.post("/queues/resume", data={"csrf": token, "queue": "mail"})
        assert not paused(deployed, "mail")
        tb.post("/queues/limit", data={"csrf": token, "queue": "mail", "max_running": "3"})
        assert re.search(r'data-queue="mail"[\s\S]*?<td class="num">3</td>', tb.get("/").text)


def test_an_admin_cancels_and_retries_a_job(deployed: str, admin_url: str) -> None:
    job_id = enqueue(deployed)
    with client(admin_url) as tb:
        token = csrf_of(tb, f"/jobs/{job_id}")
        done = tb.post(f"/jobs/{job_id}/cancel", data={"csrf": token, "next": f"/jobs/{job_id}"})
        assert done.status_code == 303
        assert done.headers["location"].startswith(f"/jobs/{job_id}?notice=")
        assert state_of(deployed, job_id) == "cancelled"
        page = tb.get(f"/jobs/{job_id}").text
        assert f'action="/jobs/{job_id}/retry"' in page
        assert f'action="/jobs/{job_id}/cancel"' not in page
        tb.post(f"/jobs/{job_id}/retry", data={"csrf": token})
        assert state_of(deployed, job_id) == "queued"


@pytest.mark.parametrize(
    "form",
    [
        {},  # no token at all
        {"csrf": "forged"},  # a token that is not the cookie's
    ],
)
def test_a_post_without_the_cookies_token_changes_nothing(
    deployed: str, admin_url: str, form: dict[str, str]
) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        csrf_of(tb)
        response = tb.post("/queues/pause", data={"queue": "mail", **form})
    assert response.status_code == 403
    assert "reload the page" in response.text
    assert not paused(deployed, "mail")


def test_a_post_from_another_site_changes_nothing(deployed: str, admin_url: str) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        token = csrf_of(tb)
        response = tb.post(
            "/queues/pause",
            data={"csrf": token, "queue": "mail"},
            headers={"Origin": "http://evil.example"},
        )
    assert response.status_code == 403
    assert "another site" in response.text
    assert not paused(deployed, "mail")


def test_the_csrf_cookie_is_strict_and_http_only(admin_url: str) -> None:
    with client(admin_url) as tb:
        cookie = tb.get("/").headers["set-cookie"]
    assert cookie.startswith(security.CSRF_COOKIE + "=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie


@pytest.mark.parametrize(
    ("path", "form", "says"),
    [
        (
            "/queues/limit",
            {"queue": "mail", "max_running": "many"},
            "must be a whole number or none",
        ),
        ("/queues/limit", {"queue": "mail", "max_running": "0"}, "max_running"),
        ("/queues/explode", {"queue": "mail"}, "no action 'explode' on a queue"),
        ("/queues/pause", {}, "queue must not be"),
        ("/jobs/1/explode", {}, "no action 'explode' on a job"),
    ],
)
def test_a_bad_action_is_one_clear_error_and_changes_nothing(
    deployed: str, admin_url: str, path: str, form: dict[str, str], says: str
) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        response = tb.post(path, data={"csrf": csrf_of(tb), **form})
        assert response.status_code in (400, 404)
        assert says in html.unescape(response.text)
        assert re.search(r'data-queue="mail"[\s\S]*?<td class="num">none</td>', tb.get("/").text)


def test_a_read_only_login_sees_no_action_and_cannot_take_one(
    deployed: str, producer_url: str
) -> None:
    job_id = enqueue(deployed)
    with client(producer_url) as tb:
        for page in ("/", f"/jobs/{job_id}"):
            text = tb.get(page).text
            assert not ACTION_FORM.search(text), page
        assert 'id="read-only"' in tb.get("/").text
        # A hand-made form with a valid token still meets the database's refusal.
        cookie = tb.cookies.get(security.CSRF_COOKIE)
        response = tb.post("/queues/pause", data={"csrf": cookie, "queue": "mail"})
        assert response.status_code == 403
        assert "grant taskboard_admin" in response.text
        response = tb.post(f"/jobs/{job_id}/cancel", data={"csrf": cookie})
        assert response.status_code == 403
    assert not paused(deployed, "mail")
    assert state_of(deployed, job_id) == "queued"


@pytest.mark.parametrize("queue", ["reports/2024", "..", "./billing", "x/../billing", "trailing/"])
def test_a_queue_with_any_name_is_paused_from_its_own_row(
    deployed: str, admin_url: str, queue: str
) -> None:
    enqueue(deployed, queue="billing")
    enqueue(deployed, queue=queue)
    with client(admin_url) as tb:
        token = csrf_of(tb)
        row = tb.get("/").text.split(f'data-queue="{html.escape(queue)}"')[1]
        form = re.search(r'<form[^>]*action="([^"]+)"[\s\S]*?name="queue" value="([^"]+)"', row)
        assert form, row[:500]
        action, named = form.group(1), html.unescape(form.group(2))
        assert (action, named) == ("/queues/pause", queue)
        done = tb.post(action, data={"csrf": token, "queue": named, "next": "/"})
        assert done.status_code == 303
    assert paused(deployed, queue)
    assert not paused(deployed, "billing")


def test_a_job_that_failed_without_a_traceback_shows(deployed: str, admin_url: str) -> None:
    job_id = enqueue(deployed)
    with connect(deployed, "taskboard_worker") as conn:
        conn.execute(
            "SELECT taskboard.fail(c.job_id, c.token, 'boom', retry => false)"
            " FROM taskboard.claim('mail', 'w') AS c"
        )
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{job_id}")
    assert page.status_code == 200 and "boom" in page.text


HANDLER_TRACEBACK = """Traceback (most recent call last):
  File "/srv/venv/lib/python3.13/site-packages/taskboard/worker/executor.py", line 189, in _handle
    result = await self._run_handler(held, task)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/srv/venv/lib/python3.13/site-packages/taskboard/worker/endings.py", line 44, in bounded
    return await awaitable
           ^^^^^^^^^^^^^^^
  File "/srv/app/billing.py", line 18, in charge
    gateway.charge(card)
  File "/srv/app/gateway.py", line 7, in charge
    raise ConnectionError("gateway down")
ConnectionError: gateway down"""


def test_a_traceback_shows_the_handlers_frames_and_the_whole_one_click_away(
    deployed: str, admin_url: str
) -> None:
    """A failed job's page showed every traceback whole, the worker's frames first."""
    job_id = enqueue(deployed)
    with connect(deployed, "taskboard_worker") as conn:
        conn.execute(
            "SELECT taskboard.fail(c.job_id, c.token, 'ConnectionError: gateway down',"
            " retry => false, traceback => %s) FROM taskboard.claim('mail', 'w') AS c",
            [HANDLER_TRACEBACK],
        )
    with client(admin_url) as tb:
        page = tb.get(f"/jobs/{job_id}").text
    short = re.search(r'<pre class="traceback">([\s\S]*?)</pre>', page)
    assert short, page
    assert html.unescape(short.group(1)).splitlines() == [
        "Traceback (most recent call last):",
        "  [2 frames of the Taskboard worker left out]",
        '  File "/srv/app/billing.py", line 18, in charge',
        "    gateway.charge(card)",
        '  File "/srv/app/gateway.py", line 7, in charge',
        '    raise ConnectionError("gateway down")',
        "ConnectionError: gateway down",
    ]
    full = re.search(
        r'<details class="full-traceback">[\s\S]*?<pre class="traceback-full">([\s\S]*?)</pre>',
        page,
    )
    assert full, "the whole traceback is one click away, closed"
    assert html.unescape(full.group(1)) == HANDLER_TRACEBACK


def test_a_page_named_by_a_foreign_host_is_refused(admin_url: str) -> None:
    """DNS rebinding: a site whose name resolves to 127.0.0.1 must not script the dashboard."""
    with client(admin_url) as tb:
        for host in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080"):
            assert tb.get("/", headers={"host": host}).status_code == 200, host
        refused = tb.get("/", headers={"host": "rebind.evil.example:8080"})
        assert refused.status_code == 421
        assert "TASKBOARD_DASHBOARD_ALLOWED_HOSTS" in refused.text
        post = tb.post(
            "/queues/pause",
            data={"queue": "mail", "csrf": "x"},
            headers={"host": "rebind.evil.example:8080"},
        )
        assert post.status_code == 421
    with client(admin_url, dashboard_allowed_hosts="tasks.internal") as tb:
        assert tb.get("/", headers={"host": "tasks.internal:8080"}).status_code == 200
        assert tb.get("/", headers={"host": "other.internal"}).status_code == 421


def test_listening_on_a_lan_address_still_refuses_a_foreign_host(admin_url: str) -> None:
    """`--host 192.168.1.20` answered `Host: evil.example`: a rebinding page could act."""
    app = server.create_app(load_settings(database_url=admin_url), listen_host="192.168.1.20")
    with TestClient(app, base_url="http://192.168.1.20:8080", follow_redirects=False) as tb:
        for host in ("192.168.1.20:8080", "127.0.0.1:8080", "localhost"):
            assert tb.get("/", headers={"host": host}).status_code == 200, host
        assert tb.get("/", headers={"host": "evil.example"}).status_code == 421
        post = tb.post(
            "/queues/pause", data={"queue": "mail", "csrf": "x"}, headers={"host": "evil.example"}
        )
        assert post.status_code == 421


def test_listening_on_every_address_answers_loopback_and_allowed_names_only(
    admin_url: str,
) -> None:
    port = free_port()
    dashboard = start_dashboard(admin_url, "--host", "0.0.0.0", "--port", str(port))
    try:
        wait_until_up(f"http://127.0.0.1:{port}", dashboard)
        base = f"http://127.0.0.1:{port}/"
        assert httpx.get(base).status_code == 200
        refused = httpx.get(base, headers={"host": f"evil.example:{port}"})
        assert refused.status_code == 421
        assert "TASKBOARD_DASHBOARD_ALLOWED_HOSTS" in refused.text
    finally:
        dashboard.send_signal(signal.SIGTERM)
        _, log = dashboard.communicate(timeout=30)
    assert "set TASKBOARD_DASHBOARD_ALLOWED_HOSTS" in log
    allowed = {"TASKBOARD_DASHBOARD_ALLOWED_HOSTS": "tasks.internal"}
    dashboard = start_dashboard(admin_url, "--host", "0.0.0.0", "--port", str(port), env=allowed)
    try:
        wait_until_up(f"http://127.0.0.1:{port}", dashboard)
        assert httpx.get(base, headers={"host": f"tasks.internal:{port}"}).status_code == 200
        assert httpx.get(base, headers={"host": "evil.example"}).status_code == 421
    finally:
        dashboard.send_signal(signal.SIGTERM)
        dashboard.communicate(timeout=30)


def test_a_lock_held_elsewhere_makes_a_page_say_so_instead_of_hanging(
    deployed: str, admin_url: str
) -> None:
    enqueue(deployed)
    with psycopg.connect(deployed) as locker, client(admin_url) as tb:
        locker.execute("LOCK TABLE taskboard.queues IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        response = tb.get("/")
        waited = time.monotonic() - started
        locker.rollback()
        assert response.status_code == 503
        assert "did not answer in time" in response.text
        assert waited < 30  # the lock wait ran out; it did not wait for the lock
        assert tb.get("/").status_code == 200


def test_a_nul_in_a_filter_is_bad_input(admin_url: str) -> None:
    with client(admin_url) as tb:
        response = tb.get("/jobs?queue=%00")
    assert response.status_code == 400
    assert "queue must not contain a NUL character" in response.text


def test_a_filter_is_matched_exactly_and_a_blank_one_is_not_dropped(
    deployed: str, admin_url: str
) -> None:
    """`queue=" "` listed every job: the filter was stripped to nothing."""
    mail = enqueue(deployed, queue="mail")
    blank = enqueue(deployed, queue=" ")
    with client(admin_url) as tb:
        named = tb.get("/jobs", params={"queue": " "})
        padded = tb.get("/jobs", params={"queue": " mail"})
        every = tb.get("/jobs", params={"queue": ""})
    listed = {
        page: set(re.findall(r'data-job="(\d+)"', r.text))
        for page, r in (("named", named), ("padded", padded), ("every", every))
    }
    assert listed == {
        "named": {str(blank)},
        "padded": set(),
        "every": {str(mail), str(blank)},
    }


def test_a_nul_in_a_form_field_is_bad_input(deployed: str, admin_url: str) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        response = tb.post("/queues/pause", data={"csrf": csrf_of(tb), "queue": "mail\x00"})
    assert response.status_code == 400
    assert "queue must not contain a NUL character" in response.text
    assert not paused(deployed, "mail")


@pytest.mark.parametrize("action", ["cancel", "retry"])
def test_an_action_on_a_missing_job_says_it_does_not_exist(
    deployed: str, admin_url: str, action: str
) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        response = tb.post(f"/jobs/424242/{action}", data={"csrf": csrf_of(tb)})
    assert response.status_code == 404
    assert "job 424242 does not exist" in response.text


def test_a_form_larger_than_any_dashboard_form_is_refused(deployed: str, admin_url: str) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        token = csrf_of(tb)
        filler = "x" * (server.MAX_FORM_BYTES + 1)
        response = tb.post("/queues/pause", data={"csrf": token, "queue": "mail", "pad": filler})
    assert response.status_code == 413
    assert f"larger than {server.MAX_FORM_BYTES} bytes" in response.text
    assert not paused(deployed, "mail")


def test_a_post_is_refused_before_a_large_body_is_read(admin_url: str) -> None:
    """A POST declaring a gigabyte is answered at once, not buffered first."""
    port = free_port()
    dashboard = start_dashboard(admin_url, "--port", str(port))
    head = (
        "POST /queues/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        "Content-Length: 1000000000\r\n{cookie}\r\n"
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", dashboard)
        answers = []
        for cookie in ("", f"Cookie: {security.CSRF_COOKIE}=abc\r\n"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(head.format(cookie=cookie).encode())
                answers.append(sock.recv(4096).split(b"\r\n", 1)[0])
    finally:
        dashboard.send_signal(signal.SIGTERM)
        dashboard.communicate(timeout=30)
    assert answers == [b"HTTP/1.1 403 Forbidden", b"HTTP/1.1 413 Request Entity Too Large"]


def test_the_first_page_after_the_server_dropped_the_connections_answers(
    deployed: str, admin_url: str, server_url: str
) -> None:
    """A database restart breaks the pooled connections; the next page used to be a 503."""
    name = conninfo.conninfo_to_dict(deployed)["dbname"]
    with client(admin_url) as tb:
        assert tb.get("/").status_code == 200
        with psycopg.connect(server_url, autocommit=True) as conn:
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND application_name = %s",
                [name, server.APPLICATION_NAME],
            ).fetchall()
        assert ended
        response = tb.get("/")
    assert response.status_code == 200, response.text


def test_a_page_answers_as_soon_as_the_database_is_back_after_an_outage(
    deployed: str, admin_url: str
) -> None:
    """After an outage the pool retries with a doubling backoff: a database back in the
    meantime used to get a 503 until the pool's next attempt, seconds to minutes later."""
    login = conninfo.conninfo_to_dict(admin_url)["user"]
    with client(admin_url) as tb:
        assert tb.get("/").status_code == 200
        with psycopg.connect(deployed, autocommit=True) as conn:
            # The outage, for this login: refused, its connections ended.
            began = time.monotonic()
            conn.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(str(login))))
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                [login],
            )
            assert tb.get("/").status_code == 503
            # The pool's attempts fail meanwhile, each later than the one before.
            time.sleep(max(0.0, began + OUTAGE_SECONDS - time.monotonic()))
            conn.execute(sql.SQL("ALTER ROLE {} LOGIN").format(sql.Identifier(str(login))))
        response = tb.get("/")
    assert response.status_code == 200, response.text


def test_pages_may_not_be_framed_by_another_site(admin_url: str) -> None:
    with client(admin_url) as tb:
        headers = tb.get("/").headers
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


# -- authentication ------------------------------------------------------------------


def test_with_a_password_every_request_must_give_it(admin_url: str) -> None:
    with client(admin_url, dashboard_password="correct horse") as tb:
        assert tb.get("/").status_code == 401
        assert tb.get("/", auth=("taskboard", "wrong password")).status_code == 401
        assert tb.get("/", auth=("someone", "correct horse")).status_code == 401
        assert tb.get("/", auth=("taskboard", "correct horse")).status_code == 200
        assert tb.get("/metrics").status_code == 401


def test_schedules_show_the_next_slot_of_the_apps_crons(deployed: str, admin_url: str) -> None:
    sys.path.insert(0, str(TESTS_DIR))
    try:
        app = importlib.import_module("apps.dashboard_app").app
    finally:
        sys.path.remove(str(TESTS_DIR))
    with TestClient(
        server.create_app(load_settings(database_url=admin_url), schedules=app.schedules),
        base_url="http://127.0.0.1:8080",
    ) as tb:
        page = tb.get("/schedules").text
    assert "nightly-report" in page and "0 3 * * *" in page
    tomorrow_or_today = re.search(r"\d{4}-\d\d-\d\d 03:00:00 UTC", page)
    assert tomorrow_or_today, page


def test_a_slot_taken_for_another_task_shows_as_a_conflict_not_as_the_schedules_job(
    deployed: str, admin_url: str
) -> None:
    sys.path.insert(0, str(TESTS_DIR))
    try:
        app = importlib.import_module("apps.dashboard_app").app
    finally:
        sys.path.remove(str(TESTS_DIR))
    with psycopg.connect(deployed, autocommit=True) as conn:
        taken = conn.execute(
            "SELECT taskboard.enqueue_periodic('nightly-report', now(), 'noop', queue => 'blackhole')"
        ).fetchone()
    assert taken is not None and taken[0] is not None
    with TestClient(
        server.create_app(load_settings(database_url=admin_url), schedules=app.schedules),
        base_url="http://127.0.0.1:8080",
    ) as tb:
        page = tb.get("/schedules").text
    assert (
        f"conflict: its latest slot (job {taken[0]}) was taken for task noop on queue "
        "blackhole, not report on reports"
    ) in page, page
    assert f'href="/jobs/{taken[0]}"' not in page


def test_metrics_are_the_queue_exporters(deployed: str, admin_url: str) -> None:
    enqueue(deployed)
    with client(admin_url) as tb:
        response = tb.get("/metrics")
    assert response.status_code == 200
    assert 'taskboard_queue_jobs{queue="mail",state="queued"} 1.0' in response.text


# -- the command -----------------------------------------------------------------------


def start_dashboard(
    url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    environ.update(TASKBOARD_DATABASE_URL=url, **(env or {}))
    return subprocess.Popen(
        [str(TASKBOARD), "dashboard", *args],
        cwd=TESTS_DIR,
        env=environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_command_serves_on_loopback_and_stops_on_sigterm(admin_url: str) -> None:
    port = free_port()
    dashboard = start_dashboard(admin_url, "--port", str(port))
    try:
        wait_until_up(f"http://127.0.0.1:{port}", dashboard)
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
        dashboard.send_signal(signal.SIGTERM)
        _, log = dashboard.communicate(timeout=30)
    finally:
        if dashboard.poll() is None:
            dashboard.kill()
            dashboard.communicate()
    assert dashboard.returncode == 0, log
    assert f"dashboard on http://127.0.0.1:{port}/" in log
    assert "without a password" not in log


def test_beyond_loopback_without_a_password_it_warns(admin_url: str) -> None:
    port = free_port()
    dashboard = start_dashboard(admin_url, "--host", "0.0.0.0", "--port", str(port))
    try:
        wait_until_up(f"http://127.0.0.1:{port}", dashboard)
        dashboard.send_signal(signal.SIGTERM)
        _, log = dashboard.communicate(timeout=30)
    finally:
        if dashboard.poll() is None:
            dashboard.kill()
            dashboard.communicate()
    assert "listening on 0.0.0.0 without a password" in log


def test_the_command_refuses_a_schema_older_than_0_5_0(make_database: MakeDatabase) -> None:
    old = make_database(release="0.4.9")
    done = subprocess.run(
        [str(TASKBOARD), "dashboard", "--port", str(free_port())],
        env={"TASKBOARD_DATABASE_URL": old, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "taskboard: error: the database's taskboard schema is version 0.4.9; this driver "
        "supports 0.6.0 up to (not including) 0.8.0: run `taskboard migrate`"
    )


def test_the_command_refuses_a_database_without_the_schema(make_database: MakeDatabase) -> None:
    empty = make_database()
    done = subprocess.run(
        [str(TASKBOARD), "dashboard", "--port", str(free_port())],
        env={"TASKBOARD_DATABASE_URL": empty, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskboard: error:"), done.stderr


def test_chart_buckets_cover_the_hour_and_sum_queues() -> None:
    now = dt.datetime(2026, 12, 3, 12, 30, 20, tzinfo=dt.UTC)
    rows = [
        {"minute_start": now.replace(minute=29, second=0), "succeeded": 3, "failed": 1},
        {"minute_start": now.replace(minute=29, second=0), "succeeded": 2, "failed": 0},
        {"minute_start": now.replace(minute=30, second=0), "succeeded": 0, "failed": 4},
        {"minute_start": now.replace(hour=10, second=0), "succeeded": 9, "failed": 9},
    ]
    buckets = chart.per_minute(rows, now, 60)
    assert len(buckets) == 60
    assert buckets[0][0] == now.replace(minute=31, hour=11, second=0)
    assert buckets[-2:] == [
        (now.replace(minute=29, second=0), 5, 1),
        (now.replace(minute=30, second=0), 0, 4),
    ]
    assert sum(s for _, s, _ in buckets) == 5
    svg = str(chart.activity_svg(buckets))
    assert svg.count('class="ok"') == 1 and svg.count('class="bad"') == 2


def test_handler_frames_trims_each_chained_block_and_keeps_a_worker_only_one() -> None:
    worker_only = "\n".join([*HANDLER_TRACEBACK.splitlines()[:7], "RuntimeError: lost"])
    assert tracebacks.handler_frames(worker_only) == (worker_only, 0)
    chained = HANDLER_TRACEBACK + "\n\nDuring handling of the above exception, ...\n\n"
    short, hidden = tracebacks.handler_frames(chained + HANDLER_TRACEBACK)
    assert hidden == 4
    assert short.count("[2 frames of the Taskboard worker left out]") == 2
    assert "executor.py" not in short and short.endswith("ConnectionError: gateway down")
