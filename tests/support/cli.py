"""The `taskboard` console script, run in tests/ without a terminal as a user runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.support import TESTS_DIR

TASKBOARD = Path(sys.executable).parent / "taskboard"  # the venv's console script
APP = "apps.cli_app:app"
TIMEOUT_SECONDS = 240  # a hang guard: a full deploy beside pytest -n's other processes
WORKER_DEADLINE_SECONDS = 30


def run(
    url: str | None,
    *args: str,
    path: str | None = None,
    settings: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `taskboard ARGS...` in tests/, without a terminal, with
    TASKBOARD_DATABASE_URL=url (unset for None), PATH=path when given, and
    TASKBOARD_<NAME>=value for each of `settings`."""
    env = command_env(url, settings)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [str(TASKBOARD), *args],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )


def command_env(url: str | None, settings: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without TASKBOARD_*, then TASKBOARD_DATABASE_URL=url
    (unset for None) and TASKBOARD_<NAME>=value for each of `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env.update({f"TASKBOARD_{k.upper()}": v for k, v in (settings or {}).items()})
    if url is not None:
        env["TASKBOARD_DATABASE_URL"] = url
    return env


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one `taskboard: error: ...` line a failed command printed, and nothing else."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("taskboard: error: "), lines[0]
    return lines[0]


def get_job(url: str, job_id: int) -> dict[str, Any]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        row = conn.execute("SELECT * FROM taskboard.get_job(%s)", [job_id]).fetchone()
        assert row is not None and row["job_id"] == job_id, f"job {job_id} does not exist"
        return row


def enqueue(url: str, *args: str) -> int:
    done = run(url, "enqueue", *args)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def run_worker_until(
    url: str,
    job_id: int,
    state: str,
    args: list[str],
    settings: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """Run `taskboard worker APP ARGS...` until job `job_id` is in `state`, then SIGTERM
    it; the finished process and its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env.update(TASKBOARD_DATABASE_URL=url, **(settings or {}))
    worker = subprocess.Popen(
        [str(TASKBOARD), "worker", APP, *args],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WORKER_DEADLINE_SECONDS
        while get_job(url, job_id)["state"] != state:
            assert worker.poll() is None, worker.communicate()[1]
            assert time.monotonic() < deadline, f"job {job_id} did not become {state}"
            time.sleep(0.1)
        worker.send_signal(signal.SIGTERM)
        _, log = worker.communicate(timeout=TIMEOUT_SECONDS)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    return worker, log
