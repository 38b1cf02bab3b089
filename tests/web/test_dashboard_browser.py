"""The dashboard in a real browser: Debian's chromium, driven by Playwright.

A worker process runs tests/apps/dashboard_app.py; two dashboard processes
serve the same database, one as an admin login and one as a producer login
(read-only). A person sees a job fail with its error and traceback, fixes
the cause, retries it and watches it succeed without reloading; pauses a
queue from the page and sees claims stop; watches a rate-limited queue's
window fill as its jobs start; and, as the read-only login, finds no
action anywhere. Screenshots land in .taskboard/screenshots/.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from taskboard_dev import devdb
from tests.support import TESTS_DIR
from tests.support.database import MakeDatabase, connect, login_role
from tests.support.web import free_port, wait_until_up

TASKBOARD = Path(sys.executable).parent / "taskboard"
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = devdb.project_root() / ".taskboard" / "screenshots"
QUEUE = "dash"
MAX_ATTEMPTS = {"flaky": 1, "echo": 3}  # as tests/apps/dashboard_app.py declares them
# Live refresh runs every 5 s: a change shows within two rounds.
SEEN_WITHIN_MS = 20_000
REFRESH_MS = 5_000


class Processes:
    """Child processes of the module, stopped with SIGTERM at the end; output to files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.running: list[tuple[subprocess.Popen[str], IO[str]]] = []

    def start(self, name: str, args: list[str], url: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(TASKBOARD_DATABASE_URL=url, TASKBOARD_POLL_INTERVAL="0.2")
        log = (self.directory / f"{name}.log").open("w")
        process = subprocess.Popen(
            [str(TASKBOARD), *args],
            cwd=TESTS_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.running.append((process, log))
        return process

    def stop(self) -> None:
        for process, _ in self.running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, log in self.running:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


class Site:
    def __init__(self, database: str, admin: str, read_only: str, worker: subprocess.Popen[str]):
        self.database = database
        self.admin = admin
        self.read_only = read_only
        self.worker = worker

    def enqueue(self, task: str, payload: Any) -> int:
        """Enqueue as the application would: with the task's queue and max_attempts."""
        app = Taskboard(load_settings(database_url=self.database))
        try:
            return app.enqueue(task, payload, queue=QUEUE, max_attempts=MAX_ATTEMPTS[task])
        finally:
            app.close()

    def state(self, job_id: int) -> str:
        with connect(self.database, "taskboard_admin") as conn:
            row = conn.execute("SELECT state FROM taskboard.get_job(%s)", [job_id]).fetchone()
        assert row is not None
        return str(row[0])

    def wait_for(self, job_id: int, state: str) -> None:
        deadline = time.monotonic() + 30
        while self.state(job_id) != state:
            assert self.worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, f"job {job_id} did not become {state}"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def site(make_database: MakeDatabase, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    database = make_database(deploy=True)
    processes = Processes(tmp_path_factory.mktemp("dashboard-processes"))
    with (
        login_role(database, "taskboard_admin") as admin,
        login_role(database, "taskboard_producer") as producer,
    ):
        try:
            worker = processes.start(
                "worker", ["worker", "apps.dashboard_app:app", "--queue", QUEUE], database
            )
            sites = []
            for name, url in (("admin", admin), ("read-only", producer)):
                port = free_port()
                dashboard = processes.start(name, ["dashboard", "--port", str(port)], url)
                base = f"http://127.0.0.1:{port}"
                wait_until_up(base, dashboard)
                sites.append(base)
            yield Site(database, sites[0], sites[1], worker)
        finally:
            processes.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `make tools` installs it"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    yield context.new_page()
    context.close()


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def action_forms(page: Page) -> int:
    return page.locator('form[method="post"]').count()


def test_a_person_sees_a_failure_retries_it_and_watches_it_succeed(
    site: Site, page: Page, tmp_path: Path
) -> None:
    gate = tmp_path / "relay-up"
    job_id = site.enqueue("flaky", {"gate": str(gate), "to": "maya@example.com"})
    site.wait_for(job_id, "dead")

    page.goto(f"{site.admin}/jobs?state=dead")
    page.get_by_role("link", name=str(job_id), exact=True).click()
    expect(page.locator("#job-state")).to_have_text("dead")
    expect(page.locator(".error-text").first).to_contain_text("the mail relay refused")
    traceback = page.locator(".traceback").first
    expect(traceback).to_contain_text("Traceback (most recent call last)")
    expect(traceback).to_contain_text("ConnectionError")
    expect(page.locator("#payload")).to_contain_text("maya@example.com")
    screenshot(page, "job-dead")
    # The handler's frames first; the worker's own frames one click away.
    expect(traceback).to_contain_text("frames of the Taskboard worker left out")
    expect(traceback).not_to_contain_text("executor.py")
    full = page.locator(".traceback-full").first
    expect(full).to_be_hidden()
    page.locator(".full-traceback > summary").first.click()
    expect(full).to_be_visible()
    expect(full).to_contain_text("executor.py")

    gate.touch()  # the cause is fixed
    page.get_by_role("button", name="Retry").click()
    expect(page.locator(".notice")).to_contain_text(f"job {job_id} queued again")
    # No reload from here: the live refresh shows the outcome.
    expect(page.locator("#job-state")).to_have_text("succeeded", timeout=SEEN_WITHIN_MS)
    expect(page.locator("#result")).to_contain_text('"sent": true')
    assert site.state(job_id) == "succeeded"
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    screenshot(page, "job")


def test_a_queue_paused_from_the_page_stops_claims(site: Site, page: Page) -> None:
    warm = site.enqueue("echo", {"n": 0})
    site.wait_for(warm, "succeeded")

    page.goto(site.admin)
    row = page.locator(f'tr[data-queue="{QUEUE}"]')
    row.get_by_role("button", name="Pause").click()
    expect(page.locator(".notice")).to_contain_text(f"queue {QUEUE} paused")
    expect(row.locator(".state.paused")).to_be_visible()

    job_id = site.enqueue("echo", {"n": 1})
    time.sleep(2)  # ten poll intervals of the worker, and a notification
    assert site.worker.poll() is None
    assert site.state(job_id) == "queued", "a paused queue hands out nothing"
    # The page shows the job waiting, by itself.
    expect(row.locator("td.queued")).to_have_text("1", timeout=SEEN_WITHIN_MS)
    screenshot(page, "queue-paused")

    row.get_by_role("button", name="Resume").click()
    expect(page.locator(".notice")).to_contain_text(f"queue {QUEUE} resumed")
    site.wait_for(job_id, "succeeded")


def test_a_queue_limit_is_set_from_the_page(site: Site, page: Page) -> None:
    site.wait_for(site.enqueue("echo", {"n": 1}), "succeeded")  # the queue is listed
    page.goto(site.admin)
    row = page.locator(f'tr[data-queue="{QUEUE}"]')
    row.get_by_label(f"limit of {QUEUE}").fill("2")
    row.get_by_role("button", name="Set limit").click()
    expect(page.locator(".notice")).to_contain_text(f"queue {QUEUE}: at most 2 running")
    with connect(site.database, "taskboard_admin") as conn:
        limit = conn.execute(
            "SELECT max_running FROM taskboard.queue_overview() WHERE queue = %s", [QUEUE]
        ).fetchone()
    assert limit == (2,)
    row.get_by_label(f"limit of {QUEUE}").fill("")
    row.get_by_role("button", name="Set limit").click()
    expect(page.locator(".notice")).to_contain_text(f"queue {QUEUE}: no limit")


def test_the_live_refresh_keeps_what_a_person_typed(site: Site, page: Page) -> None:
    site.wait_for(site.enqueue("echo", {"n": 2}), "succeeded")  # the queue is listed
    page.goto(site.admin)
    box = page.locator(f'tr[data-queue="{QUEUE}"]').get_by_label(f"limit of {QUEUE}")
    box.fill("7")
    page.locator("h1").click()  # the box loses the focus, its value edited
    status = page.locator("#live-status")
    page.wait_for_timeout(REFRESH_MS * 2)
    expect(box).to_have_value("7")
    expect(status).not_to_contain_text("updated")  # it skipped the refreshes
    box.fill("")  # back as the page gave it
    page.locator("h1").click()
    expect(status).to_contain_text("updated", timeout=SEEN_WITHIN_MS)


def test_a_queues_key_and_rate_limits_show_and_its_window_fills_as_jobs_start(
    site: Site, page: Page
) -> None:
    """A queue no worker serves: the test claims its jobs, and the page follows by itself."""
    site.wait_for(site.enqueue("echo", {"n": 3}), "succeeded")  # the queue without limits
    rated = "rated"
    with connect(site.database, "taskboard_producer") as conn:
        for key in ("x", "x", "y"):
            conn.execute(
                "SELECT taskboard.enqueue('send', '{}', %s, concurrency_key => %s)", [rated, key]
            )
    with connect(site.database, "taskboard_admin") as conn:
        conn.execute("SELECT taskboard.set_key_limit(%s, 1)", [rated])
        conn.execute("SELECT taskboard.set_rate_limit(%s, 2, interval '1 hour')", [rated])
        # A queue with settings is listed, jobs or not.
        conn.execute("SELECT taskboard.set_rate_limit('keyed', 5, interval '10 minutes', true)")

    page.goto(site.admin)
    row = page.locator(f'tr[data-queue="{rated}"]')
    expect(row.locator("td.key-limit")).to_have_text("1")
    rate = row.locator("td.rate-limit")
    expect(rate).to_have_text("0 of 2 per 1h")
    expect(rate).not_to_have_class(re.compile(r"\bat-limit\b"))
    keyed = page.locator('tr[data-queue="keyed"] td.rate-limit')
    expect(keyed).to_have_text("0 of 5 per 10m per key")
    # A queue without limits reads "none" in both.
    plain = page.locator(f'tr[data-queue="{QUEUE}"]')
    expect(plain.locator("td.key-limit")).to_have_text("none")
    expect(plain.locator("td.rate-limit")).to_have_text("none")

    tokens: list[tuple[Any, ...]] = []
    with connect(site.database, "taskboard_worker") as conn:
        for _ in range(3):  # x, then y; the key limit holds the second x, the rate limit all
            claimed = conn.execute(
                "SELECT job_id, token FROM taskboard.claim(%s, 'w', 1)", [rated]
            ).fetchall()
            tokens += claimed
            if len(tokens) == 1:
                # No reload: the live refresh shows the start.
                expect(rate).to_have_text("1 of 2 per 1h", timeout=SEEN_WITHIN_MS)
    assert len(tokens) == 2
    expect(rate).to_have_text("2 of 2 per 1h", timeout=SEEN_WITHIN_MS)
    expect(rate).to_have_class(re.compile(r"\bat-limit\b"))
    screenshot(page, "queue-limits")
    with connect(site.database, "taskboard_worker") as conn:
        for job_id, token in tokens:
            conn.execute("SELECT taskboard.complete(%s, %s)", [job_id, token])
    # Finished, they still count within the hour; the x held back waits, queued.
    page.reload()
    expect(rate).to_have_text("2 of 2 per 1h")
    expect(row.locator("td.queued")).to_have_text("1")


def test_a_read_only_login_sees_no_action(site: Site, page: Page) -> None:
    job_id = site.enqueue("flaky", {"gate": "/nonexistent/gate"})
    site.wait_for(job_id, "dead")

    page.goto(site.read_only)
    expect(page.locator(f'tr[data-queue="{QUEUE}"]')).to_be_visible()
    expect(page.locator("#read-only")).to_be_visible()
    assert action_forms(page) == 0
    page.goto(f"{site.read_only}/jobs/{job_id}")
    expect(page.locator("#job-state")).to_have_text("dead")
    expect(page.locator(".traceback").first).to_contain_text("ConnectionError")
    assert action_forms(page) == 0
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)

    # The same pages as the admin login offer them.
    page.goto(f"{site.admin}/jobs/{job_id}")
    expect(page.get_by_role("button", name="Retry")).to_have_count(1)


def test_the_overview_shows_the_hour(site: Site, page: Page) -> None:
    """The totals hold at least this test's own jobs, wherever pytest-xdist ran the others."""
    succeeded = [site.enqueue("echo", {"n": n}) for n in range(3)]
    dead = [site.enqueue("flaky", {"gate": "/nonexistent/gate"}) for _ in range(2)]
    for job_id in succeeded:
        site.wait_for(job_id, "succeeded")
    for job_id in dead:
        site.wait_for(job_id, "dead")
    page.goto(site.admin)
    expect(page.locator("svg.chart rect.ok").first).to_be_visible()
    expect(page.locator("svg.chart rect.bad").first).to_be_visible()
    assert int(page.locator("#total-succeeded").inner_text()) >= 3
    # Each dead job's one attempt failed.
    assert int(page.locator("#total-failed").inner_text()) >= 2
    assert int(page.locator("#total-dead").inner_text()) >= 2
    screenshot(page, "overview")
