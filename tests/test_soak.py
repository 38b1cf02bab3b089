"""The quick fault-injection soak passes: every invariant holds under faults.

Runs ``python -m soak --quick`` (soak/) as a subprocess. The soak kills and
stops workers, terminates their connections and restarts PostgreSQL, so it
never uses the session's server: it starts a throwaway server of its own, of
the same major version as the session's server. Each run draws a new seed;
a failure prints it, and ``make soak SOAK_QUICK=1 SOAK_SEED=<seed>`` replays
the same jobs and fault schedule.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from taskboard_dev import devdb, server

SOAK_TIMEOUT_S = 150  # the quick soak takes about 35 s; this only bounds a hang
INVARIANT_ROW = re.compile(r"^\| *\d+ *\| *(held|VIOLATED[^|]*) *\|")
MIN_INVARIANTS = 20


def server_major(server_url: str) -> str:
    with psycopg.connect(server_url, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()
    assert row is not None
    return str(row[0])


def test_quick_soak_holds_every_invariant(server_url: str, tmp_path: Path) -> None:
    major = server_major(server_url)
    try:
        server.flavour(major)
    except server.ServerError as exc:
        pytest.skip(f"the soak starts its own PostgreSQL {major} and cannot here: {exc}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKBOARD_", "SOAK_"))}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "soak",
            "--quick",
            "--own-server",
            "--pg",
            major,
            "--run-dir",
            str(tmp_path),
        ],
        cwd=devdb.project_root(),
        env=env,
        capture_output=True,
        text=True,
        timeout=SOAK_TIMEOUT_S,
        check=False,
    )
    output = result.stdout + result.stderr
    seed = re.search(r"seed (\d+)", output)
    where = f"seed {seed.group(1) if seed else '?'}; history and logs in {tmp_path}"
    assert result.returncode == 0, f"the soak failed ({where}):\n{output[-6000:]}"
    verdicts = [m.group(1) for line in output.splitlines() if (m := INVARIANT_ROW.match(line))]
    assert len(verdicts) >= MIN_INVARIANTS, f"too few invariant lines ({where}):\n{output[-6000:]}"
    assert all(v == "held" for v in verdicts), f"an invariant was violated ({where}):\n{output}"
