"""Behind PgBouncer in transaction mode: prepared statements are refused at start-up, in one line.

A PgBouncer of our own (transaction pooling, `server_reset_query = DEALLOCATE
ALL` after every transaction, as a pool that hands sessions other server
connections does to them) sits in front of the test server. A worker with
psycopg's prepared statements exits at start-up saying which setting fixes
it; with `TASKBOARD_PREPARE_THRESHOLD=none` and LISTEN on a direct
connection it works through the pooler.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from conftest import MakeDatabase
from taskboard_dev.server import as_root, flavour, server_user

TASKBOARD = Path(sys.executable).parent / "taskboard"
TESTS_DIR = Path(__file__).resolve().parent
APP = "apps.cli_app:app"
PORT = 6432
DEADLINE_SECONDS = 60.0


def server_socket_dir(url: str) -> str:
    return parse_qs(urlsplit(url).query)["host"][0]


def bouncer_user(socket_dir: str) -> str | None:
    """Who runs PgBouncer: it refuses root, so as root the user whose server owns the socket."""
    if not as_root():
        return None
    owner = pwd.getpwuid(os.stat(socket_dir).st_uid).pw_name
    return owner if owner != "root" else server_user(flavour("18"))


@pytest.fixture
def bouncer(server_url: str) -> Iterator[str]:
    """The socket directory of a PgBouncer in transaction mode in front of the test server."""
    executable = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(executable).exists():
        pytest.fail("pgbouncer is not installed: `make tools` installs it")
    user = bouncer_user(server_socket_dir(server_url))
    work = Path(tempfile.mkdtemp(prefix="tb-bouncer-"))
    (work / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={server_socket_dir(server_url)} port=5432\n"
        "[pgbouncer]\n"
        f"unix_socket_dir = {work}\n"
        "listen_addr =\n"
        f"listen_port = {PORT}\n"
        "auth_type = trust\n"
        f"auth_file = {work / 'users.txt'}\n"
        "pool_mode = transaction\n"
        "default_pool_size = 4\n"
        "server_reset_query = DEALLOCATE ALL\n"
        "server_reset_query_always = 1\n"
        "ignore_startup_parameters = extra_float_digits,options\n"
        f"logfile = {work / 'pgbouncer.log'}\n"
    )
    (work / "users.txt").write_text('"postgres" ""\n')
    argv = [executable, str(work / "pgbouncer.ini")]
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in [work, *work.iterdir()]:
            os.chown(path, entry.pw_uid, entry.pw_gid)
        argv = ["runuser", "-u", user, "--", *argv]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not (work / f".s.PGSQL.{PORT}").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (
                    (work / "pgbouncer.log").read_text()
                    if (work / "pgbouncer.log").exists()
                    else ""
                )
                pytest.fail(
                    f"pgbouncer did not start: {proc.stderr.read() if proc.stderr else ''}{log}"
                )
            time.sleep(0.05)
        yield str(work)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def through(bouncer: str, url: str) -> str:
    database = urlsplit(url).path.lstrip("/")
    return f"postgresql://postgres@/{database}?host={bouncer}&port={PORT}"


def worker(url: str, **settings: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    env.update({f"TASKBOARD_{k.upper()}": v for k, v in settings.items()})
    return subprocess.Popen(
        [str(TASKBOARD), "worker", APP, "--pool-size=3", "--worker-name=bounced"],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_worker_behind_a_transaction_pooler_says_to_turn_prepared_statements_off(
    make_database: MakeDatabase, bouncer: str
) -> None:
    url = make_database(deploy=True)
    proc = worker(through(bouncer, url), listen_url=url)
    _, stderr = proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == 1, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("taskboard: error: prepared statements are lost"), lines[0]
    assert "TASKBOARD_PREPARE_THRESHOLD=none" in lines[0]


def test_worker_behind_a_transaction_pooler_works_without_prepared_statements(
    make_database: MakeDatabase, bouncer: str
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT taskboard.enqueue('cli-echo', '{\"n\": 7}', queue => 'cli')"
        ).fetchone()
        assert row is not None
        job_id = int(row[0])
    proc = worker(through(bouncer, url), prepare_threshold="none", listen_url=url)
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            with psycopg.connect(url, autocommit=True) as conn:
                state = conn.execute(
                    "SELECT state FROM taskboard.jobs WHERE id = %s", [job_id]
                ).fetchone()
            if state == ("succeeded",):
                break
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the job did not finish behind the pooler"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
