"""`make demo` end to end: the story unfolds, with real worker processes and a real SMTP server.

The demo runs as a subprocess in a fresh deployed database of its own, so
it never touches taskboard_demo (which `make demo` may be using) nor
another test's database. Its preparation is pointed at the test server as
a configured server (TASKBOARD_DATABASE_URL) with database names of the
tests' own.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from starlette.testclient import TestClient

from taskboard.settings import load_settings
from taskboard.web import server
from taskboard_dev import demo, devdb
from taskboard_dev.server import drop_database
from tests.support.database import TEST_DATABASE_PREFIX, MakeDatabase

DEMO_TIMEOUT_SECONDS = 240  # it takes well under a minute; a loaded machine gets room


def test_demo_tells_the_story_with_two_emails_then_one_then_one_ledger_row_then_one_card(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    done = subprocess.run(
        [sys.executable, "-m", "taskboard_dev.demo", "--database-url", url],
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_SECONDS,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"Scenario 1 \(send, then stall\): Maya got 2 messages", output), output
    assert re.search(r"Scenario 2 \(.*\): Maya got 1 message\b", output), output
    assert re.search(r"Scenario 3 \(transactional\): the ledger holds 1 row, worker-B's", output)
    # Scenario 4: the store kept B's card at B's fence and refused A's write, at A's lower
    # fence, with HTTP 409.
    scenario_4 = output.partition("\nScenario 4:")[2]
    a_fence, b_fence = (
        int(n)
        for n in re.findall(r"Worker [AB] \(pid \d+\) \S+ job \d+: .*, fence (\d+)", scenario_4)
    )
    assert b_fence > a_fence, output
    assert re.search(
        rf'the store answers 409 \{{"accepted": false, .*"fence": {a_fence}, '
        rf'"highest_fence": {b_fence}\}}',
        scenario_4,
    ), output
    assert re.search(
        rf"Scenario 4 \(fenced store\): the store holds worker-B's card, fence {b_fence}; "
        rf"it refused worker-A's write, fence {a_fence}\.",
        output,
    ), output
    # B reclaimed each job on attempt 2, and A's token was refused every time.
    assert len(re.findall(r"Worker B \(pid \d+\) reclaimed job \d+: attempt 2,", output)) == 4
    assert len(re.findall(r"A's token \S+\) returns false", output)) == 4
    # It ends with where to see it all on the dashboard.
    assert done.stdout.rstrip().splitlines()[-1] == (
        f"See it on the dashboard: `make dashboard` (or TASKBOARD_DATABASE_URL='{url}' "
        "taskboard dashboard), then open http://127.0.0.1:8080/"
    ), done.stdout
    # Each job's page names A's lost attempt and its refused completion.
    reclaimed = [int(n) for n in re.findall(r"Worker B \(pid \d+\) reclaimed job (\d+):", output)]
    a, b = demo.ROLES["worker-a"], demo.ROLES["worker-b"]
    with psycopg.connect(url, autocommit=True) as conn:
        for job_id in reclaimed:
            lines = conn.execute(
                "SELECT kind, worker, actor_worker FROM taskboard.job_history(%s)", [job_id]
            ).fetchall()
            assert ("reclaimed", a, b) in lines, lines
            assert ("refused_complete", a, None) in lines, lines
    app = server.create_app(load_settings(database_url=url))
    with TestClient(app, base_url="http://127.0.0.1:8080") as tb:
        page = tb.get(f"/jobs/{reclaimed[0]}").text
    assert f"Lease expired on {a}, reclaimed by {b}" in page
    assert f"Late complete by {a} refused by the fence" in page


def post(port: int, body: object) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://{demo.STORE_HOST}:{port}{demo.STORE_PATH}",
        data=json.dumps(body).encode(),
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, json.loads(refused.read())


def test_demo_store_accepts_an_equal_fence_and_refuses_a_lower_one_or_none() -> None:
    store = demo.FencedStore()
    with contextlib.ExitStack() as stack:
        port = demo.start_store(store, stack)
        assert post(port, {"key": "k", "fence": 2, "value": "B"})[0] == 200
        assert post(port, {"key": "k", "fence": 2, "value": "B again"})[0] == 200
        assert post(port, {"key": "k", "fence": 1, "value": "A"}) == (
            409,
            {"accepted": False, "key": "k", "fence": 1, "highest_fence": 2},
        )
        assert post(port, {"key": "k", "fence": None, "value": "unfenced"})[0] == 400
        assert post(port, {"key": "other", "fence": 1, "value": "another object"})[0] == 200
    assert store.get("k") == {"fence": 2, "value": "B again"}
    assert [r["value"] for r in store.refused("k")] == ["A"]


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def test_demo_never_drops_a_database_on_a_configured_server(
    server_url: str, make_database: MakeDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = make_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE precious (id integer PRIMARY KEY)")
        conn.execute("INSERT INTO precious VALUES (1), (2)")
    monkeypatch.setenv(devdb.DATABASE_URL_ENV, server_url)

    with pytest.raises(demo.DemoRefused, match="the demo did not make it"):
        demo.prepare_database(None, name=database_name(url))

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id FROM precious ORDER BY id").fetchall()
    assert rows == [(1,), (2,)]


def test_demo_recreates_only_the_database_it_made_on_a_configured_server(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = TEST_DATABASE_PREFIX + "demo_" + uuid.uuid4().hex[:12]
    monkeypatch.setenv(devdb.DATABASE_URL_ENV, server_url)
    try:
        url = demo.fresh_database(name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE left_by_the_last_run (id integer)")
        assert demo.fresh_database(name) == url
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT to_regclass('left_by_the_last_run')").fetchone()
        assert row == (None,)
    finally:
        drop_database(server_url, name)
