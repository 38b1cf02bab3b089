"""The web-framework recipes in examples/, run as their users run them.

FastAPI under real uvicorn, Django through manage.py, the SQLAlchemy
scripts with python, each against a fresh database of the dev server;
docs/guides/web-frameworks.md shows these files.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from taskboard_dev import devdb
from tests.support.database import MakeDatabase

EXAMPLES = devdb.project_root() / "examples"
PYTHON = sys.executable
STARTUP_SECONDS = 30.0


def jobs(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT id, task, state, attempt, payload FROM taskboard.jobs ORDER BY id"
        ).fetchall()


def wait_for(
    what: str, check: Callable[[], bool], log: Path | None = None, timeout: float = STARTUP_SECONDS
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}" + (f":\n{log.read_text()}" if log else ""))
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def env_for(url: str, **more: str) -> dict[str, str]:
    return {**os.environ, "TASKBOARD_DATABASE_URL": url, "PYTHONUNBUFFERED": "1", **more}


# -- FastAPI ---------------------------------------------------------------------


def post(port: int, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {}


def test_fastapi_enqueues_in_the_request_and_its_worker_stops_gracefully(
    make_database: MakeDatabase, tmp_path: Path
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url) as conn:
        conn.execute((EXAMPLES / "fastapi" / "schema.sql").read_text())
    port = free_port()
    output = tmp_path / "uvicorn.log"
    with output.open("w") as sink:
        server = subprocess.Popen(
            [PYTHON, "-m", "uvicorn", "app:api", "--port", str(port)],
            cwd=EXAMPLES / "fastapi",
            env=env_for(url, TASKBOARD_SHUTDOWN_GRACE="3", TASKBOARD_POLL_INTERVAL="0.2"),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for("uvicorn to start", lambda: "startup complete" in output.read_text(), output)
        status, made = post(port, "/signups", {"email": "ada@example.com"})
        assert status == 200, output.read_text()
        wait_for(
            "the welcome mail", lambda: "sent to ada@example.com" in output.read_text(), output
        )

        # A duplicate email: 409, the transaction rolled back, still one job.
        assert post(port, "/signups", {"email": "ada@example.com"})[0] == 409
        assert [job["id"] for job in jobs(url)] == [made["job"]]

        # SIGTERM with two handlers running: the short one finishes within the
        # grace, the long one is handed back for another worker.
        _, short = post(port, "/signups", {"email": "bo@example.com", "seconds": 1})
        _, long = post(port, "/signups", {"email": "cy@example.com", "seconds": 60})
        wait_for(
            "both to run",
            lambda: {j["state"] for j in jobs(url) if j["id"] != made["job"]} == {"running"},
        )
        server.send_signal(signal.SIGTERM)
        # uvicorn shuts down, then ends by the signal it caught.
        assert server.wait(timeout=30) in (0, -signal.SIGTERM), output.read_text()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    log = output.read_text()
    states = {job["id"]: job["state"] for job in jobs(url)}
    assert states == {made["job"]: "succeeded", short["job"]: "succeeded", long["job"]: "queued"}
    assert "sent to bo@example.com" in log
    assert "INFO:     taskboard.worker: worker " in log and " started: queues=default" in log
    assert "stopping: waiting up to 3s for 2 handler(s)" in log
    assert "succeeded=2 failed=0 dead=0 lost=0 stale=0 released=1" in log
    assert log.index(" stopped: ") < log.index("Application shutdown complete.")
    assert "Traceback" not in log, log


# -- SQLAlchemy ------------------------------------------------------------------


@pytest.mark.parametrize("script", ["sync_session.py", "async_session.py"])
def test_sqlalchemy_commit_keeps_the_job_and_rollback_leaves_none(
    make_database: MakeDatabase, script: str
) -> None:
    url = make_database(deploy=True)
    done = subprocess.run(
        [PYTHON, script],
        cwd=EXAMPLES / "sqlalchemy",
        env=env_for(url),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url) as conn:
        orders = [row[0] for row in conn.execute("SELECT id FROM orders")]
    assert len(orders) == 1
    assert done.stdout.strip() == f"orders: {orders} kept: {orders[0]}"
    assert [(job["task"], job["payload"]) for job in jobs(url)] == [
        ("send_receipt", {"order_id": orders[0]})
    ]


# -- Django ----------------------------------------------------------------------


@pytest.fixture
def prefixed_database(make_database: MakeDatabase, server_url: str) -> Iterator[tuple[str, str]]:
    """(url, prefix): a fresh empty database, and a role prefix of its own for a
    Taskboard install in it (the server's taskboard_ roles belong to the other
    tests' deploys); both dropped at the end."""
    url = make_database()
    prefix = "tweb" + uuid.uuid4().hex[:8]
    yield url, prefix
    name = str(psycopg.conninfo.conninfo_to_dict(url)["dbname"])
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        roles = conn.execute(
            "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", [prefix + "_"]
        ).fetchall()
        for (role,) in roles:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


PLACE_ORDERS = """
from django.db import transaction
from orders.services import place_order

kept = place_order("teapot")
try:
    with transaction.atomic():
        place_order("kettle")
        raise RuntimeError("payment declined")
except RuntimeError:
    pass
print(kept.pk)

# What Taskboard reads on Django's connection decodes as on its own.
from orders.tasks import psycopg_connection, taskboard
[job] = taskboard.jobs(conn=psycopg_connection())
assert job.payload == {"order_id": kept.pk}, job.payload
assert taskboard.get_job(job.job_id, conn=psycopg_connection()) == job
assert job.created_at.tzinfo is not None
"""


def test_django_migration_atomic_enqueue_and_worker_command(
    prefixed_database: tuple[str, str], tmp_path: Path
) -> None:
    url, prefix = prefixed_database  # empty: the project's migration installs Taskboard
    project = tmp_path / "django"
    shutil.copytree(EXAMPLES / "django", project)
    env = env_for(url, DATABASE_URL=url)
    del env["TASKBOARD_DATABASE_URL"]  # the project's settings come from DATABASES

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    script = subprocess.run(
        [PYTHON, "-m", "taskboard", "sql", "--no-transaction", "--prefix", prefix],
        capture_output=True,
        text=True,
        check=True,
    )
    (project / "orders" / "migrations" / "0002_taskboard.sql").write_text(script.stdout)
    migrated = manage("migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "Applying orders.0002_taskboard... OK" in migrated.stdout
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT taskboard.version()").fetchone()
        assert row is not None and row[0]

    placed = manage("shell", "-c", PLACE_ORDERS)
    assert placed.returncode == 0, placed.stderr
    order = int(placed.stdout.split()[0])
    with psycopg.connect(url) as conn:
        assert [r[0] for r in conn.execute("SELECT id FROM orders_order")] == [order]
    [job] = jobs(url)
    assert (job["task"], job["payload"]) == ("send_receipt", {"order_id": order})

    output = tmp_path / "worker.log"
    with output.open("w") as sink:
        worker = subprocess.Popen(
            [PYTHON, "manage.py", "taskboard_worker"],
            cwd=project,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for("the receipt", lambda: jobs(url)[0]["state"] == "succeeded", output)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0, output.read_text()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    log = output.read_text()
    assert f"orders.tasks: receipt for order {order} (teapot) sent" in log
    assert "SIGTERM: shutting down" in log
    assert " stopped: claimed=1 succeeded=1 " in log
