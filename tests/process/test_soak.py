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
the database enforced. So is invariant 22 (never more starts per window than
a rate limit): on crafted starts, with a deliberately wrong check (a window
half as long, one start fewer), and on the quick run checked again with each
rate limit it recorded lowered by one start.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg
import pytest

from soak.index import HistoryIndex
from soak.invariants import (
    Invariant,
    dependencies_first,
    key_limits,
    rate_limits,
    released_by_accepted,
)
from soak.plan import (
    CONCURRENCY_KEYS,
    DEFAULT_JOBS,
    DEFAULT_SECONDS,
    DEFAULT_WORKERS,
    KEY_LIMIT,
    KEYED_QUEUE,
    MIN_GRAPHS,
    PLAIN_QUEUES,
    QUICK_JOBS,
    QUICK_SECONDS,
    QUICK_WORKERS,
    RATE_LIMITS,
    RATED_QUEUE,
    TASK_MIX,
    TRANSACTIONAL_TASKS,
    Config,
    Plan,
    make_plan,
)
from taskboard_dev import devdb, server

SOAK_TIMEOUT_S = 150  # the quick soak takes about 35 s; this only bounds a hang
INVARIANT_ROW = re.compile(r"^\| *\d+ *\| *(held|VIOLATED[^|]*) *\|")
MIN_INVARIANTS = 24


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
    timed = re.search(r"^\| *23 *\|.*\| *(\d+) *\|$", output, re.MULTILINE)
    assert timed and int(timed.group(1)) > 0, f"no dependency's end was timed ({where})"
    assert_checks_fail_on_a_doctored_history(tmp_path, where)


def assert_checks_fail_on_a_doctored_history(run_dir: Path, where: str) -> None:
    """Keys were contended: some key's jobs held its whole limit of leases at once; rate
    limits were reached: some window held all the starts its limit allows. The same run
    checked again with the recorded key limit and rate limits lowered by one (the
    database ran with the higher ones, behind the check's back) violates invariants 21
    and 22; with its started dependents recorded as waiting also for the job that
    succeeded last, it violates invariant 23."""
    add_a_late_dependency(run_dir, where)
    runner = run_dir / "history" / "runner.jsonl"
    lines = runner.read_text().splitlines()
    lowered = []
    rates = 0
    for line in lines:
        event = json.loads(line)
        if event.get("ev") == "op" and event.get("kind") == "key_limit":
            assert event["limit"] == KEY_LIMIT >= 2, line
            line = json.dumps({**event, "limit": KEY_LIMIT - 1})
        if event.get("ev") == "op" and event.get("kind") == "rate_limit":
            assert event["starts"] >= 2, line
            line = json.dumps({**event, "starts": event["starts"] - 1})
            rates += 1
        lowered.append(line)
    assert lowered != lines, f"the runner recorded no key limit ({where})"
    assert rates == len(RATE_LIMITS), f"the runner recorded {rates} rate limits ({where})"
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
    row = re.search(r"^\| *22 *\| *(held|VIOLATED[^|]*) *\|", result.stdout, re.MULTILINE)
    assert row and row.group(1).startswith("VIOLATED"), (
        f"invariant 22 held with every rate limit lowered by one start ({where}):\n"
        f"{result.stdout[-4000:]}{result.stderr[-2000:]}"
    )
    row = re.search(r"^\| *23 *\| *(held|VIOLATED[^|]*) *\|", result.stdout, re.MULTILINE)
    assert row and row.group(1).startswith("VIOLATED"), (
        f"invariant 23 held with the dependents waiting for the last job to succeed ({where}):\n"
        f"{result.stdout[-4000:]}{result.stderr[-2000:]}"
    )


def add_a_late_dependency(run_dir: Path, where: str) -> None:
    """Record every dependent of the producers' graphs as waiting also for the job that
    succeeded last (the database never made it wait for that one)."""
    final = json.loads((run_dir / "final.json").read_text())
    # id, ..., state (3), ..., finished_at (9)
    succeeded = [row for row in final["jobs"] if row[3] == "succeeded" and row[9] is not None]
    last = max(succeeded, key=lambda row: row[9])[0]
    doctored = 0
    for path in (run_dir / "history").glob("producer-*.jsonl"):
        lines = []
        for line in path.read_text().splitlines():
            event = json.loads(line)
            for edge in event.get("graph") or []:
                if edge["job"] != last:
                    edge["depends_on"].append(last)
                    doctored += 1
            lines.append(json.dumps(event))
        path.write_text("\n".join(lines) + "\n")
    assert doctored, f"the producers recorded no graph ({where})"


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
    process = [f for f in plan.faults if f.kind in ("kill", "stop", "terminate") and not f.aim]
    assert all(0 <= f.slot < config.slots for f in process)
    assert any(config.is_plain(f.slot) for f in process)
    for kind in ("kill", "stop", "terminate"):
        slots = [f.slot for f in process if f.kind == kind]
        if len(slots) >= 2:
            assert any(config.is_plain(s) for s in slots), kind
    assert set(PLAIN_QUEUES) == {"email", "partner", "sync", "metered"}
    assert sum(len(b.payloads) for b in plan.batches if b.queue == RATED_QUEUE) > 0
    keyed = [b for b in plan.batches if b.queue == KEYED_QUEUE]
    assert keyed and all(b.concurrency_keys is not None for b in keyed)
    keys = {k for b in keyed for k in b.concurrency_keys or [] if k is not None}
    assert 1 < len(keys) <= CONCURRENCY_KEYS
    assert not any(b.concurrency_keys for b in plan.batches if b.queue != KEYED_QUEUE)
    assert all(TASK_MIX[t][0] not in PLAIN_QUEUES for t in TRANSACTIONAL_TASKS)
    # Graphs of dependent jobs: a chain, a child run anyway, a doomed parent; and faults
    # aimed at the holders of their running jobs, on workers with every task.
    graphs = [b.graph for b in plan.batches if b.graph is not None]
    assert len(graphs) >= MIN_GRAPHS
    assert any(len(g) == 3 and g[2]["after"] == [1] and g[1]["after"] == [0] for g in graphs)
    assert any(g[-1]["on_failure"] == "run" for g in graphs)
    assert any(n["task"] == "doomed" and not n["after"] for g in graphs for n in g)
    graph_jobs = sum(len(g) for g in graphs)
    assert 0.02 <= graph_jobs / sum(len(b.payloads) for b in plan.batches) <= 0.06, graph_jobs
    aimed = [f for f in plan.faults if f.aim]
    assert {f.kind for f in aimed} == {"kill", "stop", "cancel"}
    assert all(not config.is_plain(f.slot) for f in aimed if f.kind != "cancel")


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


# -- invariant 22 on crafted starts: it holds, and it fails when a window held too many --


class CraftedStarts:
    """Starts of the rate-limited queues, as the soak records them: claims (their v_now
    from the lease's deadline, their fence), reclaims in job_events, the jobs' final
    fences and started_at; and the runner's rate_limit call."""

    def __init__(self, starts: int, per: float, *, by_key: bool = False) -> None:
        self.queue = KEYED_QUEUE if by_key else RATED_QUEUE
        self.events: list[dict[str, Any]] = [
            {
                "ev": "op",
                "t": T0,
                "proc": "runner",
                "kind": "rate_limit",
                "sent": T0,
                "sent_db": T0,
                "answered": T0,
                "confirmed_db": T0,
                "answer": True,
                "queue": self.queue,
                "starts": starts,
                "per": per,
                "by_key": by_key,
            }
        ]
        self.jobs: dict[int, list[Any]] = {}
        self.reclaims: list[list[Any]] = []

    def job(self, job: int, key: str | None = None) -> list[Any]:
        # id, queue, task, state, attempt, max_attempts, dedupe_key, token, rid,
        # finished_at, errors, holds, fence, run_at, concurrency_key, started_at
        return self.jobs.setdefault(job, [
            job, self.queue, "meter.call", "succeeded", 0, 5, None, None, f"{job}.0.0",
            None, [], False, 0, None, key, None,
        ])  # fmt: skip

    def claim(self, job: int, at: float, *, key: str | None = None, recorded: bool = True) -> None:
        """Job `job` started at `at` seconds (the claim's v_now): its next fence. Not
        `recorded`: the worker died before its history line, the database still knows."""
        row = self.job(job, key)
        row[4] += 1
        row[12] += 1
        row[15] = T0 + at
        if recorded:
            self.events.append(
                {"ev": "claim", "t": T0 + at + 0.01, "proc": "w0.1", "sent": T0 + at,
                 "job": job, "token": f"token-{job}-{row[12]}", "attempt": row[4],
                 "task": row[2], "rid": row[8], "exp": T0 + at + LEASE,
                 "ikey": f"ikey-{job}", "fence": row[12]}
            )  # fmt: skip

    def reclaim(self, job: int, at: float, *, recorded: bool = True) -> None:
        """The lease of `job` expired; a claim at `at` took it over (job_events)."""
        self.reclaims.append([job, self.job(job)[12] + 1, T0 + at])
        self.claim(job, at, recorded=recorded)

    def check(self, **wrong: Any) -> Invariant:
        """Invariant 22 over these starts; `wrong` replaces fields of the recorded limit."""
        events = [{**self.events[0], **wrong}, *self.events[1:]]
        config = Config(jobs=1, seconds=5, workers=2, seed=1, lease=LEASE)
        final = {
            "server_version": "18",
            "jobs": list(self.jobs.values()),
            "ledger": [],
            "dedupe_index": None,
            "schedules": [],
            "reclaims": self.reclaims,
        }
        return rate_limits(HistoryIndex(config, Plan(config), events, final, True))


def test_rate_limit_invariant_fails_when_a_window_holds_one_start_too_many() -> None:
    history = CraftedStarts(starts=3, per=1.0)
    for job, at in ((1, 1.0), (2, 1.0), (3, 1.5), (4, 1.9)):  # 4 starts within 0.9 s
        history.claim(job, at)
    inv = history.check()
    assert not inv.held and len(inv.violations) == 1, inv
    assert "4 starts in the 1 s ending" in inv.violations[0], inv.violations


def test_rate_limit_invariant_holds_at_the_limit_and_fails_a_wrong_check() -> None:
    """Three starts at once, three more exactly one window later, one in between the
    windows' edges: the limit of 3 per 1 s holds (a start `per` before another is outside
    its window, as claim counts). A deliberately wrong check, a window half as long and
    one start fewer, fails on the same starts."""
    history = CraftedStarts(starts=3, per=1.0)
    history.claim(1, 3.5)  # the jobs' ids in another order than their starts
    for job in (2, 3, 4):
        history.claim(job, 2.0)
    for job in (5, 6, 7):
        history.claim(job, 1.0)
    inv = history.check()
    assert inv.held and inv.checked == 7, inv
    assert "most in one window: 3" in inv.note and "2 windows at the limit" in inv.note, inv.note
    wrong = history.check(per=0.5, starts=2)
    assert not wrong.held and len(wrong.violations) == 2, wrong


def test_rate_limit_invariant_counts_reclaims_the_history_never_recorded() -> None:
    """A reclaim is a start: one that only job_events recorded (its worker died before
    its history line) still fills the window, and the job's final started_at places its
    last start."""
    history = CraftedStarts(starts=2, per=1.0)
    history.claim(1, 1.0)
    history.claim(2, 3.0)
    history.reclaim(1, 3.2, recorded=False)  # job 1's lease ran out; taken over at 3.2
    assert history.check().held
    history.reclaim(2, 3.6, recorded=False)  # the third start within 0.6 s
    inv = history.check()
    assert not inv.held and "fence 2 (reclaim)" in inv.violations[0], inv
    history = CraftedStarts(starts=2, per=1.0)
    history.claim(1, 1.0)
    history.claim(2, 1.1)
    history.claim(3, 1.2, recorded=False)  # placed by its started_at alone
    inv = history.check()
    assert not inv.held and "job 3 fence 1 (final)" in inv.violations[0], inv


def test_rate_limit_invariant_counts_each_key_apart_with_by_key() -> None:
    history = CraftedStarts(starts=2, per=1.0, by_key=True)
    for job, key in ((1, "customer-1"), (2, "customer-1"), (3, "customer-2"), (4, "customer-2")):
        history.claim(job, 1.0, key=key)
    for job in (5, 6, 7):
        history.claim(job, 1.0)  # without a key: not limited
    assert history.check().held
    history.claim(8, 1.5, key="customer-2")
    inv = history.check()
    assert not inv.held and len(inv.violations) == 1 and "key customer-2" in inv.violations[0]
    assert not history.check(by_key=False).held  # the queue as a whole: 8 within 0.5 s


# -- invariants 23 and 24 on crafted graphs: they hold, and they fail when a dependent ran early --


class CraftedGraph:
    """A graph as a producer enqueued it (its record's `graph`: each dependent's
    dependencies and on_dependency_failure), the claims and completions of its jobs as
    the workers recorded them, and the final rows of the jobs (finished_at and run_at
    on the database's clock, the errors a cascade wrote)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.jobs: dict[int, list[Any]] = {}
        self.fences: dict[int, int] = defaultdict(int)

    def enqueue(self, parents: list[int], child: int, *, mode: str = "cancel") -> None:
        """Jobs `parents` and `child` in one group, `child` waiting for the parents."""
        ids = [*parents, child]
        for job in ids:
            # id, queue, task, state, attempt, max_attempts, dedupe_key, token, rid,
            # finished_at, errors, holds, fence, run_at, concurrency_key, started_at,
            # on_dependency_failure
            self.jobs[job] = [
                job, "email", "email.send", "waiting" if job == child else "queued", 0, 5,
                None, None, f"1.{job}.0", None, [], False, 0, T0, None, None,
                mode if job == child else "cancel",
            ]  # fmt: skip
        self.events.append(
            {"ev": "enqueue", "t": T0, "proc": "producer-0", "sent": T0, "batch": 1,
             "queue": "", "task": "graph", "rids": [f"1.{j}.0" for j in ids], "keys": None,
             "concurrency_keys": None, "ids": ids,
             "graph": [{"job": child, "depends_on": parents, "mode": mode}]}
        )  # fmt: skip

    def claim(self, job: int, at: float, *, proc: str = "w0.1") -> str:
        """Job `job` started at `at` seconds (the claim's v_now): its next fence."""
        row = self.jobs[job]
        self.fences[job] += 1
        row[3], row[4], row[12], row[15] = "running", row[4] + 1, self.fences[job], T0 + at
        token = f"token-{job}-{self.fences[job]}"
        row[7] = token
        self.events.append(
            {"ev": "claim", "t": T0 + at + 0.01, "proc": proc, "sent": T0 + at, "job": job,
             "token": token, "attempt": row[4], "task": row[2], "rid": row[8],
             "exp": T0 + at + LEASE, "ikey": f"ikey-{job}", "fence": self.fences[job]}
        )  # fmt: skip
        return token

    def complete(self, job: int, token: str, at: float, *, accepted: bool = True) -> None:
        """A complete of `job` under `token` answered at `at`: accepted (the job succeeded,
        finished_at `at`) or refused (a stale holder's)."""
        proc = next(e["proc"] for e in self.events if e.get("token") == token)
        self.events.append(
            {"ev": "complete", "t": T0 + at + 0.01, "proc": proc, "sent": T0 + at,
             "job": job, "token": token, "answer": accepted, "txn": False}
        )  # fmt: skip
        self.effect(job, token, at, proc)
        if accepted:
            self.end(job, "succeeded", at)

    def effect(self, job: int, token: str, at: float, proc: str) -> None:
        self.events.append(
            {"ev": "effect", "t": T0 + at, "proc": proc, "job": job, "token": token,
             "ikey": f"ikey-{job}"}
        )  # fmt: skip

    def end(self, job: int, state: str, at: float) -> None:
        """`job` ended `state` at `at`; its waiting dependents are released then (run_at)."""
        self.jobs[job][3] = state
        self.jobs[job][9] = T0 + at
        for event in self.events:
            for edge in event.get("graph", []):
                if job in edge["depends_on"] and self.jobs[edge["job"]][3] == "waiting":
                    ends = [self.jobs[d][9] for d in edge["depends_on"]]
                    if all(ends):
                        self.jobs[edge["job"]][3] = "queued"
                        self.jobs[edge["job"]][13] = max(ends)

    def cascade(self, child: int, dependency: int, how: str, at: float) -> None:
        """`child` cancelled at `at` because `dependency` ended `how`."""
        row = self.jobs[child]
        row[3], row[9] = "cancelled", T0 + at
        stamp = dt.datetime.fromtimestamp(T0 + at, dt.UTC).isoformat()
        row[10].append({"error": f"dependency {dependency} ended {how}", "attempt": 0, "at": stamp})

    def check(self) -> tuple[Invariant, Invariant]:
        config = Config(jobs=1, seconds=5, workers=2, seed=1, lease=LEASE)
        final = {
            "server_version": "18",
            "jobs": list(self.jobs.values()),
            "ledger": [],
            "dedupe_index": None,
            "schedules": [],
        }
        index = HistoryIndex(config, Plan(config), self.events, final, True)
        return dependencies_first(index), released_by_accepted(index)


def test_dependency_invariants_hold_when_the_child_starts_after_the_accepted_completions() -> None:
    """A stalled holder's complete of a parent is refused (its lease was reclaimed); the
    child is released by the new holder's accepted completion, and starts after it."""
    graph = CraftedGraph()
    graph.enqueue([1, 2], 3)
    graph.complete(1, graph.claim(1, 1.0), 1.2)
    stale = graph.claim(2, 1.0, proc="w1.1")
    graph.complete(2, graph.claim(2, 3.1), 3.3)  # reclaimed after the lease ran out
    graph.complete(2, stale, 3.5, accepted=False)  # w1.1 woke up: refused
    graph.complete(3, graph.claim(3, 3.4), 3.6)
    first, second = graph.check()
    assert first.held and first.checked == 2, first
    assert second.held and "1 refused completions of 1 dependencies" in second.note, second


def test_dependency_invariant_fails_when_a_dependent_starts_before_the_accepted_completion() -> (
    None
):
    graph = CraftedGraph()
    graph.enqueue([1, 2], 3)
    graph.complete(1, graph.claim(1, 1.0), 1.2)
    graph.claim(2, 1.0)
    graph.complete(3, graph.claim(3, 1.5), 1.7)  # job 2 is still running
    graph.complete(2, graph.jobs[2][7], 2.0)
    graph.jobs[3][13] = T0 + 1.5  # runnable from 1.5 on: released before the completion
    first, second = graph.check()
    assert not first.held and len(first.violations) == 1, first
    assert "job 3 (cancel) started at" in first.violations[0], first.violations
    assert "0.500 s before its dependency 2" in first.violations[0], first.violations
    assert not second.held and len(second.violations) == 1, second
    assert "0.500 s before its last dependency 2" in second.violations[0], second.violations


def test_dependency_invariant_fails_when_a_refused_completion_preceded_the_start() -> None:
    """The parent's stale holder was refused at 2.2; the child started at 2.4, before the
    parent's accepted completion at 3.3: as if the refused completion had released it."""
    graph = CraftedGraph()
    graph.enqueue([1], 2)
    stale = graph.claim(1, 1.0, proc="w1.1")
    graph.claim(1, 3.1)
    graph.complete(1, stale, 2.2, accepted=False)
    graph.complete(2, graph.claim(2, 2.4), 2.6)
    graph.complete(1, graph.jobs[1][7], 3.3)
    graph.jobs[2][13] = T0 + 2.2  # runnable from the refused completion on
    first, second = graph.check()
    assert not first.held, first
    assert not second.held and len(second.violations) == 2, second
    assert "w1.1's complete of its dependency 1 was refused" in " ".join(second.violations)
    assert "was runnable from" in " ".join(second.violations), second.violations


def test_dependency_invariant_checks_a_failed_dependency_cancels_or_runs_its_dependent() -> None:
    graph = CraftedGraph()
    graph.enqueue([1, 2], 3)
    graph.complete(1, graph.claim(1, 1.0), 1.2)
    graph.claim(2, 1.0)
    graph.end(2, "dead", 1.5)
    graph.cascade(3, 2, "dead", 1.5)
    assert all(inv.held for inv in graph.check())
    graph.jobs[3][10] = [{"error": "dependency 1 ended dead", "attempt": 0}]
    first, _ = graph.check()
    assert not first.held and "first dependency to end so was 2" in first.violations[0], first
    graph.jobs[3][10] = []
    graph.complete(3, graph.claim(3, 2.0), 2.2)  # the cascade never came: it ran
    first, _ = graph.check()
    assert not first.held and any(
        "although its dependency 2 ended dead" in v for v in first.violations
    )
    run = CraftedGraph()  # with "run", a dead dependency counts as ended
    run.enqueue([1], 2, mode="run")
    run.claim(1, 1.0)
    run.end(1, "dead", 1.5)
    run.complete(2, run.claim(2, 1.6), 1.8)
    first, second = run.check()
    assert first.held and second.held and "1 run after a failed one" in first.note, first


def test_dependency_invariant_fails_when_a_dependent_is_left_waiting() -> None:
    graph = CraftedGraph()
    graph.enqueue([1], 2)
    graph.complete(1, graph.claim(1, 1.0), 1.2)
    graph.jobs[2][3] = "waiting"  # not released by the accepted completion
    _, second = graph.check()
    assert not second.held and "left waiting" in second.violations[0], second
