"""The raw-SQL floor: pgbench running floor/cycle.sql against a bare table.

For each (batch, clients) the table is refilled with more queued jobs than
the run can take, vacuumed and checkpointed, then pgbench runs for a fixed
time in prepared mode. jobs/s = pgbench's tps x batch; a run that ran dry
(no queued row left, so cycles could have come back empty) is an error.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import psycopg

from taskboard_dev.server import Server, recreate_database

HERE = Path(__file__).resolve().parent / "floor"
DATABASE = "bench_floor"
TPS = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.MULTILINE)
# Queued rows to start from, per job claimed per cycle: comfortably more than
# the fastest run here takes (about 10k cycles/s at 1 a claim, 2k at 50).
ROWS_PER_SECOND = {1: 15_000, 50: 110_000}


def prepare(server: Server) -> str:
    url = recreate_database(server.url(), DATABASE)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute((HERE / "schema.sql").read_text())
    return url


def refill(url: str, rows: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE floor_jobs RESTART IDENTITY")
        conn.execute(
            "INSERT INTO floor_jobs (payload) SELECT '{}'::jsonb FROM generate_series(1, %s)",
            [rows],
        )
        conn.execute("VACUUM (ANALYZE) floor_jobs")
        conn.execute("CHECKPOINT")


def run(server: Server, url: str, *, batch: int, clients: int, seconds: int) -> dict[str, Any]:
    """One pgbench run; returns jobs/s, pgbench's tps and the rows it finished."""
    rows = ROWS_PER_SECOND[batch] * seconds
    refill(url, rows)
    argv = [
        server.bin("pgbench"),
        "--no-vacuum",
        "--protocol=prepared",
        f"--client={clients}",
        f"--jobs={min(clients, 2)}",
        f"--time={seconds}",
        f"--define=batch={batch}",
        f"--file={HERE / 'cycle.sql'}",
        DATABASE,
    ]
    result = subprocess.run(
        argv, env=server.libpq_env(DATABASE), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"pgbench failed:\n{result.stdout}{result.stderr}")
    match = TPS.search(result.stdout)
    if match is None:
        raise RuntimeError(f"no tps in pgbench output:\n{result.stdout}")
    tps = float(match.group(1))
    with psycopg.connect(url, autocommit=True) as conn:
        done, queued = conn.execute(
            "SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'queued')"
            "  FROM floor_jobs"
        ).fetchone()
    if queued == 0:
        raise RuntimeError(
            f"the floor ran dry (batch {batch}, {clients} clients): raise ROWS_PER_SECOND"
        )
    return {"jobs_per_s": tps * batch, "tps": tps, "done": done, "seconds": seconds}
