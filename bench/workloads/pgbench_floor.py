"""Floor: pgbench running bench/floor/cycle.sql (claim with FOR UPDATE SKIP LOCKED and a
token, complete by id and token) at each (jobs a claim, clients) of the plan."""

from __future__ import annotations

import floor
from measure import Bench, log
from report import FLOOR, Line


def run_floor(bench: Bench, url: str, batch: int, clients: int) -> None:
    got = floor.run(
        bench.server, url, batch=batch, clients=clients, seconds=bench.plan.floor_seconds
    )
    line = Line(
        "floor",
        f"{batch} a claim, {clients} client{'s' if clients > 1 else ''}",
        "jobs/s",
        True,
    )
    bench.samples.add(line, FLOOR, got["jobs_per_s"])
    bench.record({"workload": "floor", "batch": batch, "clients": clients, **got})
    log(f"floor {batch} a claim, {clients} clients: {got['jobs_per_s']:,.0f} jobs/s")
