"""W3's dashboard pages: how long the pages take on a table of finished jobs.

A real `taskboard dashboard` process serves the W3 database; each page is
fetched REQUESTS times in a row over HTTP after one warm-up fetch, and the
milliseconds of each fetch (request to last byte) are kept. The pages are
the overview (queue_overview and job_activity over the last hour, and the
chart), the first page of the job list unfiltered and filtered by state and
by queue and task, a page deep in the list (keyset from the middle id),
and one job.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REQUESTS = 20
START_TIMEOUT_S = 60.0
BUSY_RECENT_SHARE = 0.1  # of the busy table's jobs, this share finished within the last hour

# The busy table: `rows` finished jobs over 4 queues and 7 tasks; the last
# tenth finished within the last hour (100,000 of a million: 28 a second),
# the rest over the 30 days before. One job in 50 is dead, with one error
# entry; the others succeeded with a result.
BUSY = """
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, attempt, max_attempts,
                            created_at, started_at, finished_at, result, errors)
SELECT 'q' || (g %% 4), 'task' || (g %% 7), pg_catalog.jsonb_build_object('n', g),
       CASE WHEN g %% 50 = 0 THEN 'dead' ELSE 'succeeded' END, t.at,
       CASE WHEN g %% 50 = 0 THEN 3 ELSE 1 END, 3, t.at, t.at, t.at + interval '10 ms',
       CASE WHEN g %% 50 = 0 THEN NULL ELSE '{"ok": true}'::jsonb END,
       CASE WHEN g %% 50 = 0
            THEN pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                     'error', 'ConnectionError: refused', 'attempt', 3, 'worker', 'bench',
                     'at', t.at))
            ELSE '[]'::jsonb END
  FROM pg_catalog.generate_series(1, %(rows)s::bigint) AS g,
       LATERAL (SELECT CASE
           WHEN g <= %(old)s
           THEN now() - interval '30 days' + g * (interval '30 days' - interval '1 hour') / %(old)s
           ELSE now() - interval '1 hour' + (g - %(old)s) * interval '1 hour' / (%(rows)s - %(old)s)
       END) AS t(at)
"""


def pages(middle_id: int) -> dict[str, str]:
    return {
        "overview": "/",
        "jobs": "/jobs",
        "jobs state=dead": "/jobs?state=dead",
        "jobs queue+task, deep": f"/jobs?queue=default&task=noop&after={middle_id}",
        "job": f"/jobs/{middle_id}",
    }


def grow_busy(url: str, rows: int) -> None:
    """Fill the (empty) jobs table of `url` with the busy table, then VACUUM ANALYZE it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(BUSY, {"rows": rows, "old": int(rows * (1 - BUSY_RECENT_SHARE))})
        conn.execute("VACUUM ANALYZE taskboard.jobs")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(log: Any, lines: int = 30) -> str:
    log.seek(0)
    return "".join(log.readlines()[-lines:])


def fetch_ms(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")
    return (time.perf_counter() - started) * 1000


def measure(
    database_url: str,
    middle_id: int,
    requests: int = REQUESTS,
    paths: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Each page's fetch times in ms, by page name (`paths`, by default `pages(middle_id)`)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = database_url
    command = Path(sys.executable).with_name("taskboard")
    with tempfile.TemporaryFile(mode="w+") as log:
        server = subprocess.Popen(
            [str(command), "dashboard", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            return fetch_pages(
                f"http://127.0.0.1:{port}", server, log, paths or pages(middle_id), requests
            )
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def fetch_pages(
    base: str, server: subprocess.Popen[str], log: Any, paths: dict[str, str], requests: int
) -> dict[str, Any]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"taskboard dashboard exited: {tail(log)}")
        try:
            fetch_ms(base + "/schedules")
            break
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise RuntimeError("taskboard dashboard did not start") from None
            time.sleep(0.1)
    out: dict[str, Any] = {}
    for name, path in paths.items():
        try:
            fetch_ms(base + path)  # warm-up
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{path} answered {exc.code}: {tail(log)}") from None
        out[name] = [fetch_ms(base + path) for _ in range(requests)]
    return out
