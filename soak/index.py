"""The history of a soak run, indexed once, with the final database beside it.

`HistoryIndex` reads every event of every process's history and the final
snapshot once: claims by token, by job and by fence; what each token's
holder started, sent and was answered; the processes, the faults and the
management operations, each placed on the claims it overlapped; the
dependencies the producers' graphs committed. The
invariants (soak/invariants.py), the findings and the report's tables
(soak/check.py) read the index, never the raw events.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from soak.plan import Config, Plan

INF = math.inf
COMMIT_SLACK_S = 1.0  # a transactional job is held until its COMMIT, one round trip later
CLOCK_SLACK_S = 1e-3  # server timestamps pass through float epoch seconds
EXAMPLES = 5
TERMINAL = ("succeeded", "dead", "cancelled")


@dataclass
class Claim:
    job: int
    token: str
    attempt: int
    proc: str
    sent: float
    t: float
    exp: float  # the database's deadline from claim (epoch seconds, server clock)
    ikey: str
    task: str
    fence: int | None = None  # from claim: strictly increasing with every claim of the job
    close: float = INF  # when this process stopped holding it, as far as the history says
    deadline: float = 0.0  # the latest deadline the database granted this token
    touched_by: set[str] = field(default_factory=set)


@dataclass
class Job:
    id: int
    queue: str
    task: str
    state: str
    attempt: int
    max_attempts: int
    dedupe_key: str | None
    token: str | None
    rid: str | None
    finished_at: float | None
    errors: list[dict[str, Any]]
    holds: bool  # a ledger.post that blocks its pool connection past the lease
    fence: int | None = None  # the final fence: how many times the job was claimed
    run_at: float | None = None  # a periodic job's: its slot
    concurrency_key: str | None = None
    started_at: float | None = None  # its last claim's database time (v_now)
    on_dependency_failure: str | None = None  # cancel or run (a job without dependencies too)


class HistoryIndex:
    """The events of one run and its final database, indexed for the invariants."""

    def __init__(
        self,
        config: Config,
        plan: Plan,
        events: list[dict[str, Any]],
        final: dict[str, Any],
        server_own: bool,
    ) -> None:
        self.config = config
        self.plan = plan
        self.server_own = server_own
        self.findings: list[str] = []
        self.server_version = str(final["server_version"])
        self._load_db(final)
        self._load_history(events)

    def _load_db(self, final: dict[str, Any]) -> None:
        self.jobs: dict[int, Job] = {r[0]: Job(*r) for r in final["jobs"]}
        self.ledger: list[tuple[int, str, str]] = [(r[0], r[1], r[2]) for r in final["ledger"]]
        index = final["dedupe_index"]
        self.dedupe_index: tuple[Any, ...] | None = tuple(index) if index else None
        self.schedules: dict[str, tuple[float, int]] = {
            r[0]: (r[1], r[2]) for r in final.get("schedules", [])
        }
        # job -> (fence, database time) of each reclaim job_events recorded
        self.reclaims: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for job_id, fence, at in final.get("reclaims", []):
            self.reclaims[job_id].append((int(fence), float(at)))

    def _load_history(self, events: list[dict[str, Any]]) -> None:
        by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in events:
            by[e["ev"]].append(e)
        self.by = by
        self.claims: dict[str, Claim] = {}
        for e in by["claim"]:
            c = Claim(
                e["job"],
                e["token"],
                e["attempt"],
                e["proc"],
                e["sent"],
                e["t"],
                e["exp"],
                e["ikey"],
                e["task"],
                e.get("fence"),
            )
            c.deadline = c.exp
            self.claims[c.token] = c
        self.claims_of: dict[int, list[Claim]] = defaultdict(list)
        for c in self.claims.values():
            self.claims_of[c.job].append(c)
        for cs in self.claims_of.values():
            cs.sort(key=lambda c: c.exp)  # every claim's lease is the same: the database's order
        self.renew_refused: list[tuple[float, str]] = []
        for e in by["renew"]:
            for _, token, exp in e["items"]:
                renewed = self.claims.get(token)
                if exp is None:
                    self.renew_refused.append((e["t"], token))
                elif renewed is not None:
                    renewed.deadline = max(renewed.deadline, exp)
        self.starts: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in by["start"]:
            self.starts[e["token"]].append(e)
        self.effects: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in by["effect"]:
            self.effects[e["token"]].append(e)
        self.completes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in by["complete"]:
            self.completes[e["token"]].append(e)
        self.fails: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in by["fail"]:
            self.fails[e["token"]].append(e)
        # Calls that raised: sent, but their outcome unknown to the worker.
        self.broke_off: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for name in ("complete_error", "complete_many_error", "fail_error", "release_error"):
            for e in by[name]:
                for _, token in e.get("items", []):
                    self.broke_off[token].append(e)
        # Settling calls recorded before they were sent.
        self.sent_calls: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for name in ("complete_sent", "complete_many_sent", "fail_sent", "release_sent"):
            for e in by[name]:
                for _, token in e.get("items", []):
                    self.sent_calls[token].append(e)
        self.releases: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in by["release"]:
            self.releases[e["token"]].append(e)
        self.by_fence: dict[tuple[int, int], Claim] = {
            (c.job, c.fence): c for c in self.claims.values() if c.fence is not None
        }
        # Every complete, fail or release a worker sent (or recorded an answer to), by
        # job: its send time and the deadline of the claim whose token it presented.
        self.leave_sends: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for table in (self.sent_calls, self.completes, self.fails, self.releases, self.broke_off):
            for token, events in table.items():
                sender = self.claims.get(token)
                if sender is not None:
                    self.leave_sends[sender.job] += [(e["sent"], sender.exp) for e in events]
        # (proc, job, attempt) -> its claims in order, to place the worker's log records
        # (a retried job counts its attempts from 1 again: the one recorded last before)
        self.claims_by_attempt: dict[tuple[str, int, int], list[Claim]] = defaultdict(list)
        for c in sorted(self.claims.values(), key=lambda c: c.t):
            self.claims_by_attempt[(c.proc, c.job, c.attempt)].append(c)
        self.lost: dict[str, dict[str, Any]] = {}
        for e in by["lost"]:
            token = self.token_of(e["proc"], e["job"], e["attempt"], e["t"])
            if token is not None:
                self.lost.setdefault(token, e)
        # processes
        self.spawned: dict[str, dict[str, Any]] = {e["name"]: e for e in by["spawn"]}
        self.exits: dict[str, dict[str, Any]] = {e["name"]: e for e in by["exit"]}
        # faults, and the operations made through the management API
        self.faults = [e for e in by["fault"] if e["kind"] != "cancel"]
        self.ops = sorted(by["op"], key=lambda e: e["sent"])
        # Cancels: through app.cancel (an `op`); a run recorded before that made them a `fault`.
        cancels = [e for e in self.ops if e["kind"] == "cancel"]
        cancels += [e for e in by["fault"] if e["kind"] == "cancel"]
        self.cancels: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for e in cancels:
            self.cancels[e["job"]].append(e)
        self.retries: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for e in self.ops:
            if e["kind"] == "retry" and e["answer"]:
                self.retries[e["job"]].append(e)
        self.phase = {e["name"]: e for e in by["phase"]}
        # Dependencies, as the producers' graphs committed them (the database removes
        # each edge when its dependency ends): each dependent's dependencies and its
        # on_dependency_failure, and each dependency's dependents.
        self.depends_on: dict[int, list[int]] = {}
        self.dependency_mode: dict[int, str] = {}
        self.dependents: dict[int, list[int]] = defaultdict(list)
        for e in by["enqueue"]:
            for edge in e.get("graph") or []:
                self.depends_on[edge["job"]] = list(edge["depends_on"])
                self.dependency_mode[edge["job"]] = edge["mode"]
                for parent in edge["depends_on"]:
                    self.dependents[parent].append(edge["job"])
        self._close_claims()
        self._touch_claims()

    def token_of(self, proc: str, job: int, attempt: int, at: float) -> str | None:
        """The token of `proc`'s claim of `job` at `attempt` that it recorded last before `at`."""
        before = [c for c in self.claims_by_attempt.get((proc, job, attempt), []) if c.t <= at]
        return before[-1].token if before else None

    def _close_claims(self) -> None:
        for c in self.claims.values():
            # A transactional complete answered true still has its COMMIT to go.
            times = [
                e["t"] + (COMMIT_SLACK_S if e["txn"] and e["answer"] else 0.0)
                for e in self.completes.get(c.token, [])
            ]
            times += [e["t"] for e in self.fails.get(c.token, [])]
            times += [e["t"] for e in self.releases.get(c.token, [])]
            if c.token in self.lost:
                times.append(self.lost[c.token]["t"])
            exit_event = self.exits.get(c.proc)
            if exit_event is not None:
                times.append(exit_event["t"])
            c.close = min(times, default=INF)

    def _touch_claims(self) -> None:
        """Mark each claim with the injected faults that overlapped it."""
        per_proc: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
        global_windows: list[tuple[str, float, float]] = []
        stop_begin: dict[str, float] = {}
        for e in self.faults:
            kind = e["kind"]
            # A fault's window runs from just before it was injected to its record.
            at = e.get("at", e["t"])
            if kind == "kill":
                per_proc[e["target"]].append(("kill", at, e["t"]))
            elif kind == "terminate":
                per_proc[e["target"]].append(("terminate", at, e["t"]))
            elif kind == "stop":
                stop_begin[e["target"]] = at
            elif kind == "cont":
                begin = stop_begin.pop(e["target"], e["t"])
                per_proc[e["target"]].append(("stop", begin, e["t"]))
        for target, begin in stop_begin.items():
            per_proc[target].append(("stop", begin, INF))
        # Restarts never overlap (one at a time): pair each begin with the next end.
        begins = sorted((e["t"], e["kind"]) for e in self.by["fault_begin"])
        ends = sorted(e["t"] for e in self.by["fault_end"])
        for i, (begin, kind) in enumerate(begins):
            global_windows.append((kind, begin, ends[i] if i < len(ends) else INF))
        for name, e in self.exits.items():
            if e["cause"] == "unexpected":
                per_proc[name].append(("crash", e["t"], e["t"]))
        self.restart_windows = global_windows
        for c in self.claims.values():
            for kind, a, b in per_proc.get(c.proc, []):
                if c.sent <= b and c.close >= a:
                    c.touched_by.add(kind)
            for kind, a, b in global_windows:
                if c.sent <= b and c.close >= a:
                    c.touched_by.add(kind)
            for e in self.cancels.get(c.job, []):
                if may_have_applied(e) and c.sent <= e["t"] and c.close >= e["sent"]:
                    c.touched_by.add("cancel")

    def job_touched(self, job: int) -> set[str]:
        kinds: set[str] = set()
        for c in self.claims_of.get(job, []):
            kinds |= c.touched_by
        if any(may_have_applied(e) for e in self.cancels.get(job, [])):
            kinds.add("cancel")
        return kinds

    def attempt_errors(self, c: Claim) -> list[str]:
        """The errors recorded for this claim's attempt: its attempt number and worker, at
        or after its claim (a retried job counts its attempts from 1 again)."""
        job = self.jobs.get(c.job)
        if job is None:
            return []
        claimed_at = c.exp - self.config.lease - CLOCK_SLACK_S
        return [
            str(e.get("error", ""))
            for e in job.errors
            if e.get("attempt") == c.attempt
            and e.get("worker") == c.proc
            and (error_at(e) or INF) >= claimed_at
        ]

    def effect_jobs(self) -> dict[int, set[str]]:
        tokens: dict[int, set[str]] = defaultdict(set)
        for token, ev in self.effects.items():
            tokens[ev[0]["job"]].add(token)
        return tokens

    def queue_settings(self, setting: str) -> dict[str, QueueSetting]:
        """Each queue's `paused` or `max_running`, as the runner's management calls set it."""
        kinds = ("pause", "resume") if setting == "paused" else ("limit",)
        out: dict[str, QueueSetting] = {}
        for e in self.ops:  # in the order the runner sent them, one at a time
            if e["kind"] not in kinds:
                continue
            value = (e["kind"] == "pause") if setting == "paused" else e["limit"]
            answered = e.get("answer") is not None and not e.get("error")
            confirmed = e.get("confirmed_db") if answered else None
            sent_db = e.get("sent_db")
            out.setdefault(e["queue"], QueueSetting(False if setting == "paused" else None))
            out[e["queue"]].calls.append((-INF if sent_db is None else sent_db, confirmed, value))
        return out

    def worker_shapes(self) -> list[dict[str, Any]]:
        """Per worker process: its group and pool (as spawned), its slots and connections
        (as the driver reported them at start), the most handlers it counted running at
        once (its `handlers_peak` lines) and the most server connections the runner saw
        it hold (its `conns` lines, sampled in pg_stat_activity)."""
        started = {e["proc"]: e for e in self.by["worker_started"] if "slots" in e}
        peaks: dict[str, int] = defaultdict(int)
        for e in self.by["handlers_peak"]:
            peaks[e["proc"]] = max(peaks[e["proc"]], e["running"])
        conns: dict[str, int] = defaultdict(int)
        for e in self.by["conns"]:
            conns[e["name"]] = max(conns[e["name"]], e["n"])
        shapes = []
        for name, e in self.spawned.items():
            if e["kind"] != "worker" or "pool_size" not in e:
                continue
            begun = started.get(name)
            shapes.append(
                {
                    "name": name,
                    "group": e["group"],
                    "pool_size": e["pool_size"],
                    "slots": begun["slots"] if begun else None,
                    "connections": begun["connections"] if begun else None,
                    "peak": peaks.get(name, 0),
                    "conns": conns.get(name, 0),
                }
            )
        return shapes

    def finding_once(self, tag: str, text: str) -> None:
        if not any(f.startswith(tag) for f in self.findings):
            self.findings.append(text)


@dataclass
class QueueSetting:
    """One setting of one queue (paused, or max_running) as management calls set it."""

    initial: Any  # before any call: unpaused, unlimited
    # (database clock read right before the call was sent, read right after its answer
    # or None when it has none, the value sent), in the order the runner sent them, one
    # at a time: each commits before the next is sent.
    calls: list[tuple[float, float | None, Any]] = field(default_factory=list)

    def possible(self, start: float, end: float) -> set[Any]:
        """Every value the setting may have had at some moment of [start, end] (the
        database's clock): the last value confirmed by `start`, and every value sent
        after it and before `end`."""
        base = self._base(start)
        values = {self.initial if base < 0 else self.calls[base][2]}
        values |= {value for sent, _, value in self.calls[base + 1 :] if sent <= end}
        return values

    def _base(self, at: float) -> int:
        """The index of the last call whose commit was confirmed by `at`; -1 if none."""
        base = -1
        for i, (_, confirmed, _) in enumerate(self.calls):
            if confirmed is not None and confirmed <= at:
                base = i
        return base

    def confirmed_before(self, at: float) -> float:
        base = self._base(at)
        confirmed = self.calls[base][1] if base >= 0 else None
        return -INF if confirmed is None else confirmed

    def certain_windows(self, value: Any) -> list[tuple[float, float]]:
        """The stretches (database clock) when the setting certainly had `value`: from a
        confirmed call that set it to the sending of the next call."""
        out: list[tuple[float, float]] = []
        for i, (_, confirmed, sent_value) in enumerate(self.calls):
            if sent_value != value or confirmed is None:
                continue
            nxt = self.calls[i + 1][0] if i + 1 < len(self.calls) else INF
            if confirmed < nxt and nxt < INF:
                out.append((confirmed, nxt))
        return out


@dataclass
class StartCall:
    """One claim call that certainly started queued jobs in a limited queue."""

    proc: str
    sent: float  # the worker's clock, when the call was sent
    last_t: float  # ... when its last row was recorded (after the answer)
    db_start: float  # the database's clock: its v_now
    db_end: float  # ... the latest it could have ended
    rows: list[Claim]
    starts: list[Claim]
    limits: set[int | None]  # every limit it may have read (no None: it read one)


def utc(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%H:%M:%S.%f")[:-3]


def may_have_applied(op: dict[str, Any]) -> bool:
    """A management call answered true, or one whose answer was lost with its connection."""
    return bool(op.get("answer")) or bool(op.get("error"))


def error_at(error: dict[str, Any]) -> float | None:
    """When an `errors` entry was recorded, on the database's clock, in epoch seconds."""
    at = error.get("at")
    if not isinstance(at, str):
        return None
    try:
        return dt.datetime.fromisoformat(at).timestamp()
    except ValueError:
        return None


def count_errors(jobs: Iterable[Job]) -> dict[str, int]:
    """How often each kind of error was recorded by fail or burial (first words)."""
    counts: dict[str, int] = defaultdict(int)
    for j in jobs:
        for e in j.errors:
            text = str(e.get("error"))
            counts[text.split(":")[0][:60]] += 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
