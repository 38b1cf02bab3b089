"""The quick fault-injection soak passes: every invariant holds under faults.

Runs ``python -m soak --quick`` (soak/) as a subprocess. The soak kills and
stops workers, terminates their connections and restarts PostgreSQL, so it
never uses the session's server: it starts a throwaway server of its own, of
the same major version as the session's server. Each run draws a new seed;
a failure prints it, and ``make soak SOAK_QUICK=1 SOAK_SEED=<seed>`` replays
the same jobs and fault schedule.

Invariant 21 (never beyond a key's limit among live leases) is also shown
to fail: on crafted histories of the keyed queue, and on the quick run's own
history checked again with the key limit it recorded lowered below the one
the database enforced.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from soak.index import HistoryIndex
from soak.invariants import Invariant, key_limits
from soak.plan import (
    CONCURRENCY_KEYS,
    DEFAULT_JOBS,
    DEFAULT_SECONDS,
    DEFAULT_WORKERS,
    KEY_LIMIT,
    KEYED_QUEUE,
    PLAIN_QUEUES,
    QUICK_JOBS,
    QUICK_SECONDS,
    QUICK_WORKERS,
    TASK_MIX,
    TRANSACTIONAL_TASKS,
    Config,
    Plan,
    make_plan,
)
from taskboard_dev import devdb, server

SOAK_TIMEOUT_S = 150  # the quick soak takes about 35 s; this only bounds a hang
INVARIANT_ROW = re.compile(r"^\| *\d+ *\| *(held|VIOLATED[^|]*) *\|")
MIN_INVARIANTS = 21


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
    assert_key_limit_check_fails_below_the_real_limit(tmp_path, where)


def assert_key_limit_check_fails_below_the_real_limit(run_dir: Path, where: str) -> None:
    """Keys were contended: some key's jobs held its whole limit of leases at once. The
    same run checked again with the recorded key limit lowered by one (the database ran
    with the higher one, behind the check's back) violates invariant 21."""
    runner = run_dir / "history" / "runner.jsonl"
    lines = runner.read_text().splitlines()
    lowered = []
    for line in lines:
        event = json.loads(line)
        if event.get("ev") == "op" and event.get("kind") == "key_limit":
            assert event["limit"] == KEY_LIMIT >= 2, line
            line = json.dumps({**event, "limit": KEY_LIMIT - 1})
        lowered.append(line)
    assert lowered != lines, f"the runner recorded no key limit ({where})"
    runner.write_text("\n".join(lowered) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "soak", "--recheck", str(run_dir)],
        cwd=devdb.project_root(),
        capture_output=True,
        text=True,
        timeout=SOAK_TIMEOUT_S,
        check=False,
    )
    row = re.search(r"^\| *21 *\| *(held|VIOLATED[^|]*) *\|", result.stdout, re.MULTILINE)
    assert result.returncode == 1 and row and row.group(1).startswith("VIOLATED"), (
        f"invariant 21 held with the key limit lowered to {KEY_LIMIT - 1} ({where}):\n"
        f"{result.stdout[-4000:]}{result.stderr[-2000:]}"
    )


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
    assert set(PLAIN_QUEUES) == {"email", "partner", "sync"}
    keyed = [b for b in plan.batches if b.queue == KEYED_QUEUE]
    assert keyed and all(b.concurrency_keys is not None for b in keyed)
    keys = {k for b in keyed for k in b.concurrency_keys or [] if k is not None}
    assert 1 < len(keys) <= CONCURRENCY_KEYS
    assert not any(b.concurrency_keys for b in plan.batches if b.queue != KEYED_QUEUE)
    assert all(TASK_MIX[t][0] not in PLAIN_QUEUES for t in TRANSACTIONAL_TASKS)


# -- invariant 21 on crafted histories: it holds, and it fails when the limit was broken --

T0 = 1_800_000_000.0  # the database's clock, epoch seconds
LEASE = 2.0
KEY = "customer-1"


class Crafted:
    """A history of the keyed queue, written as the soak's processes write theirs, and
    the final database beside it: claims (the database's lease start and deadline, the
    worker's send and record times), renewals, settling calls, the key limit's call."""

    def __init__(self, limit: int = 2) -> None:
        self.events: list[dict[str, Any]] = [
            {
                "ev": "op",
                "t": T0,
                "proc": "runner",
                "kind": "key_limit",
                "sent": T0,
                "sent_db": T0,
                "answered": T0,
                "confirmed_db": T0,
                "answer": True,
                "queue": KEYED_QUEUE,
                "limit": limit,
            }
        ]
        self.jobs: dict[int, list[Any]] = {}

    def claim(
        self, job: int, at: float, *, took: float = 0.01, key: str | None = KEY, proc: str = "w0.1"
    ) -> str:
        """Job `job` claimed at `at` seconds (its v_now), the call answered `took` later."""
        token = f"token-{job}-{at}"
        self.events.append(
            {
                "ev": "claim",
                "t": T0 + at + took,
                "proc": proc,
                "sent": T0 + at,
                "job": job,
                "token": token,
                "attempt": 1,
                "task": "customer.sync",
                "rid": f"{job}.0.0",
                "exp": T0 + at + LEASE,
                "ikey": f"ikey-{job}",
                "fence": 1,
            }
        )
        # id, queue, task, state, attempt, max_attempts, dedupe_key, token, rid,
        # finished_at, errors, holds, fence, run_at, concurrency_key
        self.jobs[job] = [
            job, KEYED_QUEUE, "customer.sync", "dead", 1, 1, None, token, f"{job}.0.0",
            None, [], False, 1, None, key,
        ]  # fmt: skip
        return token

    def renew(self, job: int, token: str, at: float) -> None:
        self.events.append(
            {"ev": "renew", "t": T0 + at, "proc": "w0.1", "sent": T0 + at,
             "items": [[job, token, T0 + at + LEASE]]}
        )  # fmt: skip

    def complete(self, job: int, at: float) -> None:
        self.jobs[job][3] = "succeeded"
        self.jobs[job][9] = T0 + at

    def fail(self, job: int, at: float, proc: str = "w0.1") -> None:
        stamp = dt.datetime.fromtimestamp(T0 + at, dt.UTC).isoformat()
        self.jobs[job][10].append(
            {"error": "PlannedFailure", "attempt": 1, "worker": proc, "at": stamp}
        )

    def release(self, job: int, token: str, at: float) -> None:
        self.jobs[job][3] = "queued"
        self.events.append(
            {"ev": "release", "t": T0 + at, "proc": "w0.1", "sent": T0 + at,
             "job": job, "token": token, "answer": True}
        )  # fmt: skip

    def check(self) -> Invariant:
        config = Config(jobs=1, seconds=5, workers=2, seed=1, lease=LEASE)
        final = {
            "server_version": "18",
            "jobs": list(self.jobs.values()),
            "ledger": [],
            "dedupe_index": None,
            "schedules": [],
        }
        return key_limits(HistoryIndex(config, Plan(config), self.events, final, True))


def test_key_limit_invariant_fails_when_a_third_lease_overlaps_two() -> None:
    history = Crafted(limit=2)
    history.claim(1, 1.0)
    history.complete(1, 2.5)
    history.claim(2, 1.2)
    history.claim(3, 2.0)  # jobs 1 and 2 still hold their leases
    inv = history.check()
    assert not inv.held and len(inv.violations) == 1, inv
    assert "key customer-1" in inv.violations[0] and "3 jobs held a live lease" in inv.violations[0]


def test_key_limit_invariant_holds_when_each_lease_ended_before_the_next_began() -> None:
    history = Crafted(limit=2)
    history.claim(1, 1.0)
    history.fail(1, 2.4)  # a fail ends it at its time in the job's errors
    history.claim(2, 1.2)
    history.renew(2, history.claim(3, 2.5), 3.0)
    # job 2's lease ran out at 3.2 (claim + lease, never renewed): job 4 may start then
    history.claim(4, 3.3)
    history.claim(5, 1.1, key="customer-2")  # another key's jobs and unkeyed ones count apart
    history.claim(6, 1.1, key=None)
    inv = history.check()
    assert inv.held and inv.checked == 5, inv


def test_key_limit_invariant_counts_a_lease_until_its_deadline_unless_settled() -> None:
    history = Crafted(limit=1)
    renewed = history.claim(1, 1.0)
    history.renew(1, renewed, 2.5)  # deadline 4.5: a renewal extends the lease
    history.claim(2, 4.0)
    inv = history.check()
    assert not inv.held, inv
    # Released at 3.0 after its renewal at 2.5: held until 2.5 at least, not proven after.
    history = Crafted(limit=1)
    renewed = history.claim(1, 1.0)
    history.renew(1, renewed, 2.5)
    history.release(1, renewed, 3.0)
    history.claim(2, 4.0)
    assert history.check().held


def test_key_limit_invariant_starts_a_lease_at_the_latest_its_claim_committed() -> None:
    """A claim's v_now is read before it waits for the queue's row: one that waited
    while another job of its key completed starts its lease, as far as the check can
    prove, no sooner than its answer."""
    history = Crafted(limit=1)
    history.claim(1, 1.0)
    history.complete(1, 2.5)
    history.claim(2, 2.4, took=0.3)  # v_now 2.4, committed by 2.7 at the latest
    assert history.check().held
    history = Crafted(limit=1)
    history.claim(1, 1.0)
    history.complete(1, 2.5)
    history.claim(2, 2.1, took=0.3)  # answered at 2.4: certainly held beside job 1
    assert not history.check().held
