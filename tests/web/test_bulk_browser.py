"""The bulk page in a real browser: pick the dead jobs of a queue, see how many, confirm.

A dashboard process serves the database as an admin login; Debian's chromium,
driven by Playwright, fills the form, reads the count and confirms.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from taskboard.app import Taskboard
from taskboard.settings import load_settings
from tests.support import TESTS_DIR
from tests.support.database import MakeDatabase, connect, login_role
from tests.support.web import free_port, wait_until_up

TASKBOARD = Path(sys.executable).parent / "taskboard"
CHROMIUM = "/usr/bin/chromium"


def dead_jobs(url: str, queue: str, count: int) -> list[int]:
    app = Taskboard(load_settings(database_url=url))
    try:
        ids = [app.enqueue("send", {"n": n}, queue=queue, max_attempts=1) for n in range(count)]
    finally:
        app.close()
    with connect(url, "taskboard_worker") as conn:
        for row in conn.execute("SELECT job_id, token FROM taskboard.claim(%s, 'w', 100)", [queue]):
            conn.execute("SELECT taskboard.fail(%s, %s, 'boom')", [row[0], row[1]])
    return ids


@pytest.fixture
def dashboard(make_database: MakeDatabase, tmp_path: Path) -> Iterator[tuple[str, str]]:
    database = make_database(deploy=True)
    with login_role(database, "taskboard_admin") as admin:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env["TASKBOARD_DATABASE_URL"] = admin
        port = free_port()
        with (tmp_path / "dashboard.log").open("w") as log:
            process = subprocess.Popen(
                [str(TASKBOARD), "dashboard", "--port", str(port)],
                cwd=TESTS_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
            try:
                base = f"http://127.0.0.1:{port}"
                wait_until_up(base, process)
                yield database, base
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)


@pytest.fixture
def page() -> Iterator[Page]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `make tools` installs it"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
        browser.close()


def test_a_person_retries_the_dead_jobs_of_a_queue_in_one_confirmed_step(
    dashboard: tuple[str, str], page: Page
) -> None:
    database, base = dashboard
    mail = dead_jobs(database, "mail", 3)
    dead_jobs(database, "other", 1)

    page.goto(f"{base}/")
    page.get_by_role("link", name="Bulk", exact=True).click()
    page.locator('select[name="action"]').select_option("retry")
    page.locator('input[name="queue"]').fill("mail")
    page.locator('select[name="state"]').select_option("dead")
    page.get_by_role("button", name="Show the jobs").click()
    expect(page.locator("#bulk-count")).to_contain_text("Retry 3 dead jobs of queue mail")
    page.get_by_role("button", name="Confirm: retry these 3 jobs").click()
    expect(page.locator(".notice")).to_have_text("retried 3 of 3 jobs")
    expect(page.locator("#bulk-count")).to_have_attribute("data-count", "0")
    with connect(database, "taskboard_admin") as conn:
        states = [
            row[0]
            for row in conn.execute(
                "SELECT (taskboard.get_job(id)).state FROM unnest(%s::bigint[]) AS id", [mail]
            )
        ]
    assert states == ["queued"] * 3
