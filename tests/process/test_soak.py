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

from soak.plan import (
    DEFAULT_JOBS,
    DEFAULT_SECONDS,
    DEFAULT_WORKERS,
    PLAIN_QUEUES,
    QUICK_JOBS,
    QUICK_SECONDS,
    QUICK_WORKERS,
    TASK_MIX,
    TRANSACTIONAL_TASKS,
    Config,
    make_plan,
)
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


@pytest.mark.parametrize("seed", [1, 2, 3, 1713812028, 1013162990])
@pytest.mark.parametrize("quick", [True, False])
def test_plan_replays_and_faults_reach_the_plain_only_worker(seed: int, quick: bool) -> None:
    """The same seed draws the same plan; the process faults reach the plain-only worker
    (the last slot), and it serves only queues without a transactional task."""
    config = Config(
        jobs=QUICK_JOBS if quick else DEFAULT_JOBS,
        seconds=QUICK_SECONDS if quick else DEFAULT_SECONDS,
        workers=QUICK_WORKERS if quick else DEFAULT_WORKERS,
        seed=seed,
        quick=quick,
    )
    plan = make_plan(config, restarts=True)
    assert plan.to_json() == make_plan(config, restarts=True).to_json()
    assert config.slots == config.workers + 1 and config.is_plain(config.workers)
    process = [f for f in plan.faults if f.kind in ("kill", "stop", "terminate")]
    assert all(0 <= f.slot < config.slots for f in process)
    assert any(config.is_plain(f.slot) for f in process)
    for kind in ("kill", "stop", "terminate"):
        slots = [f.slot for f in process if f.kind == kind]
        if len(slots) >= 2:
            assert any(config.is_plain(s) for s in slots), kind
    assert set(PLAIN_QUEUES) == {"email", "partner"}
    assert all(TASK_MIX[t][0] not in PLAIN_QUEUES for t in TRANSACTIONAL_TASKS)
