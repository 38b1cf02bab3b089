"""The invariants, computed from the history outside the queue and the final database.

Sources, named in each invariant's `source`:

- history: the JSON lines the workers, producers and the runner fsynced
  (see soak/app.py, soak/producer.py, soak/runner.py). The workers' lines
  are what their handlers saw and every answer the database gave their SQL
  calls; the runner's are the faults it injected and the operations it made
  through the management API (pauses, resumes, limits, cancels, retries),
  each with the database clock read right before it was sent and right
  after its answer.
- worker log: the driver's own warnings and final counters, as the worker
  process recorded them from its log records.
- database: the final rows of taskboard.jobs and soak_app.ledger, read as
  superuser after every worker stopped (the lease token included, which no
  API returns), and the catalog's view of the dedupe index.

The queue's view of itself (states, attempts, tokens) is used only where an
invariant is about that final state, and is then checked against the
history, never taken as evidence of what happened.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import psycopg

from soak.app import PERIODIC_EVERY_S, PERIODIC_SCHEDULE, PERIODIC_TASK
from soak.history import read_events
from soak.plan import Config, Plan

INF = math.inf
COMMIT_SLACK_S = 1.0  # a transactional job is held until its COMMIT, one round trip later
CLOCK_SLACK_S = 1e-3  # server timestamps pass through float epoch seconds
CONNECTION_ERRORS = (
    "OperationalError",
    "AdminShutdown",
    "CrashShutdown",
    "PoolTimeout",
    "InterfaceError",
)
EXAMPLES = 5
# A worker whose control connection works from a slot on sends it within this
# long: its scheduler passes 50 ms after the slot, between claims, and a claim
# waits at most a second for a row lock (the control connection's lock_timeout).
SCHEDULER_PASS_S = 1.5
TERMINAL = ("succeeded", "dead", "cancelled")


@dataclass
class Invariant:
    name: str
    source: str
    checked: int
    violations: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def held(self) -> bool:
        return not self.violations


@dataclass
class FaultRow:
    kind: str
    planned: int = 0
    injected: int = 0
    skipped: int = 0
    claims_hit: int = 0
    note: str = ""


@dataclass
class Result:
    invariants: list[Invariant]
    faults: list[FaultRow]
    stats: dict[str, Any]
    findings: list[str]
    server_version: str

    @property
    def ok(self) -> bool:
        return all(i.held for i in self.invariants)


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


JOBS_SQL = """
SELECT id, queue, task, state, attempt, max_attempts, dedupe_key, lease_token::text,
       payload->>'rid', extract(epoch FROM finished_at)::float8, errors, payload ? 'hold',
       fence, extract(epoch FROM run_at)::float8
  FROM taskboard.jobs
 ORDER BY id
"""
DEDUPE_INDEX_SQL = """
SELECT i.indisunique, i.indisvalid, i.indisready, pg_get_indexdef(i.indexrelid)
  FROM pg_index AS i
 WHERE i.indexrelid = 'taskboard.jobs_unfinished_task_dedupe_key'::regclass
"""


def snapshot(admin_url: str) -> dict[str, Any]:
    """The final database as superuser sees it: jobs (with their lease tokens), ledger, index."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        index = conn.execute(DEDUPE_INDEX_SQL).fetchone()
        return {
            "server_version": str(version[0]) if version else "?",
            "jobs": [list(r) for r in conn.execute(JOBS_SQL).fetchall()],
            "ledger": [
                list(r)
                for r in conn.execute("SELECT job_id, token::text, rid FROM soak_app.ledger")
            ],
            "dedupe_index": list(index) if index else None,
            "schedules": [
                list(r)
                for r in conn.execute(
                    "SELECT schedule, extract(epoch FROM last_slot)::float8, last_job_id"
                    "  FROM taskboard.schedules ORDER BY schedule"
                ).fetchall()
            ],
        }


def run(
    *, config: Config, plan: Plan, final: dict[str, Any], history_dir: Path, server_own: bool
) -> Result:
    """Check the invariants over the history in `history_dir` and the `final` snapshot."""
    events = list(read_events(history_dir))
    return Checker(config, plan, events, final, server_own).check()


class Checker:
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

    # -- loading -----------------------------------------------------------------

    def _load_db(self, final: dict[str, Any]) -> None:
        self.jobs: dict[int, Job] = {r[0]: Job(*r) for r in final["jobs"]}
        self.ledger: list[tuple[int, str, str]] = [(r[0], r[1], r[2]) for r in final["ledger"]]
        index = final["dedupe_index"]
        self.dedupe_index: tuple[Any, ...] | None = tuple(index) if index else None
        self.schedules: dict[str, tuple[float, int]] = {
            r[0]: (r[1], r[2]) for r in final.get("schedules", [])
        }

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
                if _may_have_applied(e) and c.sent <= e["t"] and c.close >= e["sent"]:
                    c.touched_by.add("cancel")

    def job_touched(self, job: int) -> set[str]:
        kinds: set[str] = set()
        for c in self.claims_of.get(job, []):
            kinds |= c.touched_by
        if any(_may_have_applied(e) for e in self.cancels.get(job, [])):
            kinds.add("cancel")
        return kinds

    # -- invariants ----------------------------------------------------------------

    def check(self) -> Result:
        invariants = [
            self.terminal(),
            self.nothing_lost(),
            self.dedupe(),
            self.final_token(),
            self.single_holder(),
            self.refused_completes(),
            self.worker_reports(),
            self.dead_attempts(),
            self.same_token_effects(),
            self.cross_token_effects(),
            self.effect_of_success(),
            self.fenced_ledger(),
            self.idempotency_keys(),
            self.leases_kept(),
            self.no_crash(),
            self.fences(),
            self.nothing_from_paused(),
            self.queue_limits(),
            self.periodic_slots(),
            self.concurrency(),
        ]
        self.find_stale_pool_connections()
        self.find_dropped_completions()
        self.find_fail_answers_lost()
        return Result(
            invariants, self.fault_rows(), self.stats(), self.findings, self.server_version
        )

    # -- findings: not invariants, but what a reviewer should hear about -----------------

    def _attempt_errors(self, c: Claim) -> list[str]:
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
            and (_error_at(e) or INF) >= claimed_at
        ]

    def find_stale_pool_connections(self) -> None:
        """Attempts that failed on a connection error although no fault overlapped them."""
        hits: list[tuple[Claim, str]] = []
        for c in self.claims.values():
            if c.touched_by:
                continue
            for error in self._attempt_errors(c):
                if error.startswith(CONNECTION_ERRORS) or error.startswith("NotHolder"):
                    hits.append((c, error))
        if not hits:
            return
        ends = sorted(e["t"] for e in self.by["fault_end"])
        terminates = sorted((e["t"], e["target"]) for e in self.faults if e["kind"] == "terminate")
        c, error = min(hits, key=lambda h: h[0].t)
        after = [t for t in ends if t <= c.sent]
        since = (
            f"{c.sent - after[-1]:.1f} s after the last restart ended"
            if after
            else "with no restart before it"
        )
        cut = [t for t, target in terminates if target == c.proc and t <= c.sent]
        if cut:
            since += f", {c.sent - cut[-1]:.1f} s after its worker's connections were terminated"
        tasks: dict[str, int] = defaultdict(int)
        for hit, _ in hits:
            tasks[hit.task] += 1
        dead = sum(
            1
            for hit, _ in hits
            if self.jobs[hit.job].state == "dead" and self.jobs[hit.job].task != "doomed"
        )
        self.findings.append(
            f"stale-pool-connection: {len(hits)} attempts failed on a handler-pool connection that had died "
            f"earlier (no fault overlapped the attempt): {dict(tasks)}; {dead} of their jobs ended dead. "
            f"Example: job {c.job} attempt {c.attempt} on {c.proc}, claimed {since}, failed with "
            f"'{error[:90]}'. With the handler pool checking connections before use "
            "(worker.py: check=AsyncConnectionPool.check_connection) this should stay at zero."
        )

    def find_dropped_completions(self) -> None:
        """Handlers that finished, then lost the job to the watchdog before their complete got an answer."""
        dropped: list[Claim] = []
        for token, e in self.lost.items():
            c = self.claims[token]
            if not e["why"].startswith("no successful renewal"):
                continue
            effects = self.effects.get(token, [])
            if not effects or effects[0]["t"] > e["t"]:
                continue
            if any(x["answer"] for x in self.completes.get(token, [])):
                continue
            if any(x["sent"] <= e["t"] for x in self.completes.get(token, [])):
                continue  # sent before the loss: the database answered it
            dropped.append(c)
        if not dropped:
            return
        ran_again = [
            c
            for c in dropped
            if any(self.effects.get(x.token) for x in self.claims_of[c.job] if x.exp > c.exp)
        ]
        # Reclaimed only after this worker had given the job up: its complete, sent once the
        # connection was back, would have been accepted had it arrived before that reclaim.
        unclaimed = [
            c
            for c in ran_again
            if all(x.t > self.lost[c.token]["t"] for x in self.claims_of[c.job] if x.exp > c.exp)
        ]
        c = (unclaimed or dropped)[0]
        self.findings.append(
            f"dropped-completion: {len(dropped)} handlers had finished (effect done) when the "
            "watchdog gave their job up (no successful renewal: the worker was stopped or cut "
            f"off), and their completion was never sent; {len(ran_again)} of those jobs ran again "
            f"(a second effect), {len(unclaimed)} of them reclaimed only after the worker had given "
            f"them up. Example: job {c.job} attempt {c.attempt} on {c.proc}. complete is fenced: "
            "sent once the connection was back, it would have been accepted had nobody reclaimed "
            "the job yet, and refused otherwise."
        )

    def find_fail_answers_lost(self) -> None:
        """fail answered NULL because an earlier send of the same fail had been applied."""
        resent = []
        for token, events in self.fails.items():
            c = self.claims.get(token)
            if c is None:
                continue
            for e in events:
                if (
                    e["answer"] is None
                    and self.broke_off.get(token)
                    and any(not err.startswith("lease expired") for err in self._attempt_errors(c))
                ):
                    resent.append(c)
        if resent:
            c = resent[0]
            self.findings.append(
                f"fail-resent: {len(resent)} fail calls were sent again after the connection broke while "
                "the first send had already been applied; the second got NULL and the worker logged "
                f"'fail of job ... refused' and counted it stale. Example: job {c.job} attempt {c.attempt} "
                f"on {c.proc}."
            )

    def terminal(self) -> Invariant:
        inv = Invariant(
            "every job ends in exactly one terminal state (succeeded, dead, cancelled); none queued or running",
            "database",
            len(self.jobs),
        )
        inv.violations = [
            f"job {j.id} ({j.task}) is {j.state}"
            for j in self.jobs.values()
            if j.state not in TERMINAL
        ]
        return inv

    def nothing_lost(self) -> Invariant:
        """Every request a producer sent has its job; every id a producer got back exists."""
        planned: set[str] = set()
        for b in self.plan.batches:
            for producer in b.producers:
                planned |= {f"{b.index}.{i}.{producer}" for i in range(len(b.payloads))}
        answered: set[str] = set()
        violations: list[str] = []
        for e in self.by["enqueue"]:
            keys = e["keys"] or [None] * len(e["rids"])
            for rid, key, job_id in zip(e["rids"], keys, e["ids"], strict=True):
                answered.add(rid)
                job = self.jobs.get(job_id)
                if job is None:
                    violations.append(
                        f"request {rid}: id {job_id} returned to the producer is not in the database"
                    )
                elif key is None and job.rid != rid:
                    violations.append(
                        f"request {rid}: id {job_id} returned, but that job is request {job.rid}"
                    )
                elif key is not None and (
                    job.dedupe_key != key or job.queue != e["queue"] or job.task != e["task"]
                ):
                    violations.append(
                        f"request {rid} (key {key}, task {e['task']}): id {job_id} returned, "
                        f"but that job has key {job.dedupe_key} and task {job.task}"
                    )
        for e in self.by["enqueue_given_up"]:
            violations.append(f"batch {e['batch']}: the producer gave up sending it")
        violations += [
            f"request {rid} was never answered" for rid in sorted(planned - answered)[:EXAMPLES]
        ]
        rids_in_db = defaultdict(list)
        for j in self.jobs.values():
            if j.task != PERIODIC_TASK:
                rids_in_db[j.rid].append(j.id)
        # A periodic job comes from the schedule, not from a producer (invariant 19).
        unknown = [
            j for j in self.jobs.values() if j.rid not in planned and j.task != PERIODIC_TASK
        ]
        violations += [
            f"job {j.id} carries request id {j.rid!r}, which no producer sent" for j in unknown
        ]
        doubled = [rid for rid, ids in rids_in_db.items() if len(ids) > 1]
        unanswered_jobs = [
            j for j in self.jobs.values() if j.rid not in answered and j.rid in planned
        ]
        errors = len(self.by["enqueue_error"])
        note = (
            f"{len(planned)} requests, {len(self.jobs)} jobs; {errors} enqueue calls broke off "
            f"(outcome unknown, sent again): {len(doubled)} requests doubled by that"
        )
        if unanswered_jobs and not errors:
            violations += [
                f"job {j.id} (request {j.rid}) exists but its request was never answered"
                for j in unanswered_jobs
            ]
        inv = Invariant(
            "no request lost: every request has its job, every returned id exists and is that request's",
            "history (producers) + database",
            len(planned),
            violations,
            note,
        )
        return inv

    # unfinished intervals for dedupe --------------------------------------------------

    def _certainly_unfinished(self) -> dict[int, tuple[float, float]]:
        """For each keyed job: an interval during which it was certainly queued or running."""
        created: dict[int, float] = {}
        for e in self.by["enqueue"]:
            keys = e["keys"] or [None] * len(e["ids"])
            for key, job_id in zip(keys, e["ids"], strict=True):
                if key is not None:
                    created[job_id] = min(created.get(job_id, INF), e["t"])
        out: dict[int, tuple[float, float]] = {}
        for job in self.jobs.values():
            if job.dedupe_key is None:
                continue
            start = created.get(job.id, INF)
            claims = self.claims_of.get(job.id, [])
            if claims:
                start = min(start, claims[0].t)
            end = INF if job.state not in TERMINAL else (job.finished_at or INF)
            for c in claims:
                for e in self.completes.get(c.token, []):
                    if e["answer"]:
                        end = min(end, e["sent"])
                for e in self.fails.get(c.token, []):
                    if e["answer"] == "dead":
                        end = min(end, e["sent"])
            for e in self.cancels.get(job.id, []):
                if _may_have_applied(e):
                    end = min(end, e["sent"])
            if self.retries.get(job.id):
                # Retried: it was finished before, at the first of these at the latest
                # (finished_at is only its last finish). Every fail that may have made it
                # dead, every burial, and the retry, which found it finished.
                ends = [end, *(e["sent"] for e in self.retries[job.id])]
                for c in claims:
                    ends += [e["sent"] for e in self.fails.get(c.token, [])]
                    ends += [
                        e["sent"]
                        for e in self.sent_calls.get(c.token, [])
                        if e["ev"] == "fail_sent"
                    ]
                ends += [
                    at
                    for e in job.errors
                    if e.get("error") == "lease expired" and (at := _error_at(e)) is not None
                ]
                end = min(ends)
            if start < end:
                out[job.id] = (start, end)
        return out

    def dedupe(self) -> Invariant:
        violations: list[str] = []
        idx = self.dedupe_index
        if idx is None:
            violations.append("index taskboard.jobs_unfinished_task_dedupe_key is missing")
        else:
            unique, valid, ready, definition = idx
            if not (unique and valid and ready):
                violations.append(f"the dedupe index is not unique/valid/ready: {definition}")
            if (
                "WHERE" not in definition
                or "queued" not in definition
                or "running" not in definition
            ):
                violations.append(
                    f"the dedupe index does not cover exactly the unfinished jobs: {definition}"
                )
        intervals = self._certainly_unfinished()
        by_key: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        for job_id in intervals:
            j = self.jobs[job_id]
            assert j.dedupe_key is not None
            by_key[(j.queue, j.task, j.dedupe_key)].append(job_id)
        overlaps = 0
        for (queue, task, key), ids in by_key.items():
            ids.sort(key=lambda i: intervals[i][0])
            for a, b in pairwise(ids):
                if intervals[b][0] < intervals[a][1]:
                    overlaps += 1
                    violations.append(
                        f"{queue}/{task}/{key}: jobs {a} and {b} were both unfinished between "
                        f"{intervals[b][0]:.3f} and {min(intervals[a][1], intervals[b][1]):.3f}"
                    )
        # Every keyed enqueue answered while one job certainly held the key got that job.
        keyed_answers = 0
        for e in self.by["enqueue"]:
            if not e["keys"]:
                continue
            for key, job_id in zip(e["keys"], e["ids"], strict=True):
                if key is None:
                    continue
                keyed_answers += 1
                for other in by_key.get((e["queue"], e["task"], key), []):
                    s, t = intervals[other]
                    if other != job_id and s <= e["sent"] and e["t"] <= t:
                        violations.append(
                            f"{e['queue']}/{e['task']}/{key}: enqueue by {e['proc']} got job {job_id} while job {other} held the key"
                        )
        keyed = sum(1 for j in self.jobs.values() if j.dedupe_key is not None)
        return Invariant(
            "never two unfinished jobs with one queue, task and dedupe key",
            "database (unique index) + history (enqueue answers, claims, settle answers)",
            keyed + keyed_answers,
            violations,
            f"{keyed} keyed jobs from {keyed_answers} keyed enqueue answers; index: "
            + ("present, unique, valid" if idx and idx[0] and idx[1] else "NOT OK"),
        )

    def final_token(self) -> Invariant:
        violations: list[str] = []
        answer_lost = answer_unrecorded = 0
        succeeded = [j for j in self.jobs.values() if j.state == "succeeded"]
        for j in succeeded:
            claims = self.claims_of.get(j.id, [])
            if not claims:
                violations.append(f"job {j.id} succeeded but no claim of it is in the history")
                continue
            last = claims[-1]
            if j.token != last.token:
                violations.append(
                    f"job {j.id} succeeded with token {j.token}, not its last claimed {last.token}"
                )
                continue
            # The last claim (in the database's order) whose handler started.
            started = [c for c in claims if self.starts.get(c.token)]
            if not started or started[-1].token != j.token:
                violations.append(
                    f"job {j.id}: the last handler start was not under its final token"
                )
            answered = [e for e in self.completes.get(j.token, []) if e["answer"]]
            if not answered:
                if any(e["ev"].startswith("complete") for e in self.broke_off.get(j.token, [])):
                    answer_lost += 1
                elif any(e["ev"].startswith("complete") for e in self.sent_calls.get(j.token, [])):
                    answer_unrecorded += 1  # its worker was killed with the call in flight
                else:
                    violations.append(
                        f"job {j.id}: succeeded, but no complete under its final token was sent"
                    )
        return Invariant(
            "every succeeded job was completed by the last token claimed for it (and the last handler started)",
            "database (final token) + history (claims, starts, complete answers)",
            len(succeeded),
            violations,
            f"{answer_lost} completions committed although their answer was lost with the "
            f"connection; {answer_unrecorded} committed while their worker was being killed "
            "(sent, answer never recorded)",
        )

    def single_holder(self) -> Invariant:
        """No claim while the previous token's lease, as the database last granted it, was live."""
        violations: list[str] = []
        pairs = 0
        lease = self.config.lease
        for job, claims in self.claims_of.items():
            for a, b in pairwise(claims):
                pairs += 1
                b_at = b.exp - lease  # the database's clock when it granted b
                if b_at >= a.deadline - CLOCK_SLACK_S:
                    continue
                if self._handed_back(a, before=b.t) or self._cancelled_between(a, b):
                    continue
                violations.append(
                    f"job {job}: claimed by {b.proc} (attempt {b.attempt}) {a.deadline - b_at:.3f} s before "
                    f"the lease granted to {a.proc} (attempt {a.attempt}) ran out"
                )
        return Invariant(
            "one holder at a time: no job reclaimed while the lease the database last granted was live",
            "history (claim and renew deadlines, on the server clock)",
            pairs,
            violations,
        )

    def _cancelled_between(self, a: Claim, b: Claim) -> bool:
        """Was the job cancelled (then retried) between claim `a` and claim `b`?"""
        return any(
            _may_have_applied(e) and a.sent <= e["t"] and e["sent"] <= b.t
            for e in self.cancels.get(a.job, [])
        )

    def _fail_applied(self, c: Claim) -> bool:
        """The job's errors hold this attempt's error from this worker: its fail was applied."""
        return any(err != "lease expired" for err in self._attempt_errors(c))

    def _handed_back(self, c: Claim, *, before: float) -> bool:
        """Did this token give the job back (fail or release) with a call sent before `before`?

        A fail whose answer was lost counts when the job's errors show it was applied.
        """
        answered = [
            e for e in self.fails.get(c.token, []) + self.releases.get(c.token, []) if e["answer"]
        ]
        if any(e["sent"] <= before for e in answered):
            return True
        sent = [e for e in self.sent_calls.get(c.token, []) if e["ev"] == "fail_sent"]
        return any(e["sent"] <= before for e in sent) and self._fail_applied(c)

    def _settled_itself(self, c: Claim, *, before: float) -> str | None:
        """Which settle call of this token, sent before `before`, the database applied."""
        if any(e["answer"] and e["sent"] <= before for e in self.completes.get(c.token, [])):
            return "complete"
        if self._handed_back(c, before=before):
            return "fail or release"
        return None

    def refused_completes(self) -> Invariant:
        violations: list[str] = []
        reasons: dict[str, int] = defaultdict(int)
        refused = 0
        for token, events in list(self.completes.items()) + list(self.fails.items()):
            for e in events:
                if e["answer"] not in (False, None):
                    continue
                call = "complete" if e["ev"] == "complete" else "fail"
                refused += 1
                reason = self._why_not_holder(token, e)
                if reason is None:
                    violations.append(
                        f"{call} of job {e['job']} by {e['proc']} refused, but its token was never superseded, "
                        "cancelled, released or buried"
                    )
                else:
                    reasons[f"{call}: {reason}"] += 1
        note = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none refused"
        return Invariant(
            "every refused complete (and fail) belonged to a token superseded, cancelled, released or buried",
            "history (answers, claims, cancels) + database (burial errors)",
            refused,
            violations,
            note,
        )

    def _why_not_holder(self, token: str, e: dict[str, Any]) -> str | None:
        c = self.claims.get(token)
        job = self.jobs.get(e["job"])
        if c is None or job is None:
            return None
        if (
            e["ev"] == "fail"
            and self.broke_off.get(token)
            and any(err != "lease expired" for err in self._attempt_errors(c))
        ):
            return "already applied by an earlier send whose answer was lost"
        claims = self.claims_of[c.job]
        if claims.index(c) < len(claims) - 1:
            return "superseded by a later claim"
        if any(r["answer"] for r in self.releases.get(token, [])):
            return "released"
        if any(_may_have_applied(x) and x["sent"] <= e["t"] for x in self.cancels.get(c.job, [])):
            return "cancelled"
        if job.state == "dead" and any(
            err.get("error") == "lease expired" and err.get("attempt") == c.attempt
            for err in job.errors
        ):
            return "buried (lease expired, no attempts left)"
        if job.attempt > c.attempt:
            return "superseded by a claim not in the history (its worker died before recording it)"
        return None

    def worker_reports(self) -> Invariant:
        violations: list[str] = []
        checked = 0
        per_proc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        refusals: dict[tuple[str, int, int], int] = defaultdict(int)
        for c in self.claims.values():
            per_proc[c.proc]["claimed"] += 1
        for events in self.completes.values():
            for e in events:
                p = per_proc[e["proc"]]
                if e["answer"]:
                    job = self.jobs.get(e["job"])
                    committed = (
                        job is not None and job.state == "succeeded" and job.token == e["token"]
                    )
                    # A transactional success counts once its COMMIT is known to
                    # have happened; a worker that could not learn it gave the job up.
                    if not e["txn"] or (committed and e["token"] not in self.lost):
                        p["succeeded"] += 1
                else:
                    p["stale"] += 1
                    refused = self.claims.get(e["token"])
                    if refused is not None:
                        refusals[(e["proc"], refused.job, refused.attempt)] += 1
        for events in self.fails.values():
            for e in events:
                if e["answer"] is None:
                    per_proc[e["proc"]]["stale"] += 1
                    failed = self.claims.get(e["token"])
                    if failed is not None:
                        refusals[(e["proc"], failed.job, failed.attempt)] += 1
        for e in self.by["refused_log"]:
            checked += 1
            key = (e["proc"], e["job"], e["attempt"])
            if refusals.get(key, 0) <= 0:
                violations.append(
                    f"{e['proc']} logged a refused {e['call']} of job {e['job']} (attempt {e['attempt']}) "
                    "that no answer in its history refused"
                )
            else:
                refusals[key] -= 1
        for e in self.by["counters"]:
            checked += 1
            mine = per_proc[e["proc"]]
            for name in ("claimed", "succeeded", "stale"):
                if e.get(name) != mine[name]:
                    violations.append(
                        f"{e['proc']} reported {name}={e.get(name)} at exit; its history of answers says {mine[name]}"
                    )
        # A token the database refused is never also a success of the same worker.
        for token, events in self.completes.items():
            answers = {(e["proc"], bool(e["answer"])) for e in events}
            procs_true = {p for p, ok in answers if ok}
            procs_false = {p for p, ok in answers if not ok}
            if procs_true & procs_false:
                violations.append(
                    f"token {token}: complete answered both true and false to one worker"
                )
        graceful = len(self.by["counters"])
        return Invariant(
            "no worker reported success for a job whose complete returned false; its counters match the answers it got",
            "worker log (refusal warnings, exit counters) + history (answers)",
            checked,
            violations,
            f"{graceful} workers exited gracefully and printed counters",
        )

    def dead_attempts(self) -> Invariant:
        violations: list[str] = []
        dead = [j for j in self.jobs.values() if j.state == "dead"]
        for j in dead:
            if j.attempt < j.max_attempts:
                violations.append(f"job {j.id} is dead at attempt {j.attempt} of {j.max_attempts}")
        lives = 0
        for job_id, claims in self.claims_of.items():
            job = self.jobs.get(job_id)
            if job is None:
                continue
            for life in self._lives(job_id, claims):
                lives += 1
                released = sum(
                    1 for c in life if any(r["answer"] for r in self.releases.get(c.token, []))
                )
                if len(life) - released > job.max_attempts:
                    violations.append(
                        f"job {job_id} was claimed {len(life)} times ({released} released) "
                        f"with max_attempts {job.max_attempts}"
                        + (" since its last retry" if len(life) < len(claims) else "")
                    )
        retried = sum(1 for r in self.retries.values() if r)
        return Invariant(
            "a job is dead only with its attempts used up, and never claimed more often than its attempts (a retry resets them)",
            "database (dead jobs) + history (claims, releases, retries)",
            len(dead) + lives,
            violations,
            f"{retried} jobs retried, their attempts counted from each retry on",
        )

    def _lives(self, job_id: int, claims: list[Claim]) -> list[list[Claim]]:
        """The job's claims split at each retry that queued it again (the retry's database
        time: every claim before it came before the job finished, every one after it saw
        run_at = the retry's clock)."""
        cuts = sorted(
            e["sent_db"] for e in self.retries.get(job_id, []) if e.get("sent_db") is not None
        )
        lives: list[list[Claim]] = [[] for _ in range(len(cuts) + 1)]
        for c in claims:
            lives[bisect.bisect_right(cuts, c.exp - self.config.lease)].append(c)
        return [life for life in lives if life]

    def same_token_effects(self) -> Invariant:
        violations = [
            f"job {ev[0]['job']}: {len(ev)} external effects under token {token}"
            for token, ev in self.effects.items()
            if len(ev) > 1
        ]
        return Invariant(
            "zero duplicate external effects under the same token",
            "history (handler effects)",
            sum(len(v) for v in self.effects.values()),
            violations,
        )

    def _effect_jobs(self) -> dict[int, set[str]]:
        tokens: dict[int, set[str]] = defaultdict(set)
        for token, ev in self.effects.items():
            tokens[ev[0]["job"]].add(token)
        return tokens

    def cross_token_effects(self) -> Invariant:
        violations: list[str] = []
        dup_jobs = {job: toks for job, toks in self._effect_jobs().items() if len(toks) > 1}
        for job, toks in dup_jobs.items():
            touched = self.job_touched(job)
            if not touched:
                violations.append(
                    f"job {job}: effects under {len(toks)} tokens, but no injected fault touched it"
                    + self._lost_note(job)
                )
        by_cause: dict[str, int] = defaultdict(int)
        for job in dup_jobs:
            for kind in self.job_touched(job) or {"none"}:
                by_cause[kind] += 1
        note = f"{len(dup_jobs)} jobs with effects under 2+ tokens; causes: " + (
            ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items())) or "none"
        )
        return Invariant(
            "duplicate external effects under different tokens only on jobs a fault touched",
            "history (effects, claims, the runner's faults)",
            len(self._effect_jobs()),
            violations,
            note,
        )

    def _lost_note(self, job: int) -> str:
        whys = [
            self.lost[c.token]["why"] for c in self.claims_of.get(job, []) if c.token in self.lost
        ]
        return f" (lost: {whys[0]})" if whys else ""

    def effect_of_success(self) -> Invariant:
        violations: list[str] = []
        succeeded = [j for j in self.jobs.values() if j.state == "succeeded"]
        for j in succeeded:
            if j.token is None or not self.effects.get(j.token):
                violations.append(
                    f"job {j.id} ({j.task}) succeeded without an effect under its final token"
                )
        return Invariant(
            "every succeeded job's effect happened under its final token (no success without the work)",
            "database (final token) + history (effects)",
            len(succeeded),
            violations,
        )

    def fenced_ledger(self) -> Invariant:
        violations: list[str] = []
        rows_of: dict[int, list[str]] = defaultdict(list)
        for job_id, token, _ in self.ledger:
            rows_of[job_id].append(token)
        for job_id, tokens in rows_of.items():
            j = self.jobs.get(job_id)
            if len(tokens) > 1:
                violations.append(f"job {job_id}: {len(tokens)} committed ledger rows")
            if j is None or j.state != "succeeded":
                violations.append(
                    f"job {job_id}: a ledger row committed, but the job is {j.state if j else 'missing'}"
                )
            elif any(t != j.token for t in tokens):
                violations.append(
                    f"job {job_id}: a ledger row committed under a token that did not complete it"
                )
        ledger_jobs = [j for j in self.jobs.values() if j.task == "ledger.post"]
        for j in ledger_jobs:
            if j.state == "succeeded" and len(rows_of.get(j.id, [])) != 1:
                violations.append(
                    f"job {j.id} succeeded with {len(rows_of.get(j.id, []))} ledger rows"
                )
        stale_writes = sum(
            1
            for c in self.claims.values()
            if c.task == "ledger.post"
            and self.jobs.get(c.job)
            and self.jobs[c.job].token != c.token
            and self.starts.get(c.token)
        )
        return Invariant(
            "fenced database effects: one ledger row per succeeded ledger job, under its final token; stale writes rolled back",
            "database (soak_app.ledger, final tokens) + history (claims)",
            len(ledger_jobs),
            violations,
            f"{len(self.ledger)} rows committed; {stale_writes} ledger handler runs under a token that did not complete the job left none",
        )

    def idempotency_keys(self) -> Invariant:
        violations: list[str] = []
        for job, claims in self.claims_of.items():
            keys = {c.ikey for c in claims} | {
                s["ikey"] for c in claims for s in self.starts.get(c.token, [])
            }
            if len(keys) > 1:
                violations.append(
                    f"job {job}: {len(keys)} different idempotency keys across its attempts"
                )
        return Invariant(
            "the idempotency key is the same for every attempt of a job",
            "history (claims, handler starts)",
            len(self.claims_of),
            violations,
        )

    def leases_kept(self) -> Invariant:
        """Renewal kept every lease alive unless a fault intervened."""
        violations: list[str] = []
        checked = 0
        benign = 0
        for token, e in self.lost.items():
            checked += 1
            c = self.claims[token]
            if c.touched_by:
                continue
            settled = self._settled_itself(c, before=e["t"])
            if settled is not None:
                benign += 1
                self._finding_once(
                    "lost-after-own-settle",
                    f"lost-after-own-settle: {e['proc']} logged 'lost job {c.job} (attempt {c.attempt}): "
                    f"{e['why']}' although its own {settled} of that token had been sent and was "
                    "applied: renewal ran while the settling call was in flight, the database refused "
                    "to renew a job that was no longer running, and the worker counted the job both "
                    "lost and settled.",
                )
                continue
            violations.append(
                f"{c.proc} lost job {c.job} ({c.task}, attempt {c.attempt}) with no injected fault: {e['why']}"
            )
        long_claims = sum(1 for c in self.claims.values() if c.task == "batch.long")
        return Invariant(
            "no lease lost without an injected fault (long handlers and pool-holding handlers renewed)",
            "worker log (lost warnings) + history (claims, faults)",
            len(self.claims),
            violations,
            f"{checked} losses, all but {len(violations)} under faults; {benign} right after the "
            f"worker's own settling call (a race, see findings); {long_claims} claims of handlers "
            "running past the lease",
        )

    def _finding_once(self, tag: str, text: str) -> None:
        if not any(f.startswith(tag) for f in self.findings):
            self.findings.append(text)

    def no_crash(self) -> Invariant:
        # A worker started while the server restarts waits for it: dying then is a crash too.
        violations = []
        for name, e in self.exits.items():
            if e["cause"] != "unexpected":
                continue
            errors = [w["error"] for w in self.by["worker_error"] if w["proc"] == name]
            violations.append(
                f"{name} exited by itself (status {e['code']})"
                + (f": {errors[0]}" if errors else "")
            )
        return Invariant(
            "no worker or producer died by itself, also when started during a server restart",
            "history (the runner's process records)",
            len(self.spawned),
            violations,
        )

    # -- fences and queue control ------------------------------------------------------

    def fences(self) -> Invariant:
        """Per job, in the order of claim, the fences handed out strictly increase."""
        violations: list[str] = []
        pairs = 0
        for job, claims in self.claims_of.items():
            # claims_of is in the order of the database's claim times (v_now = exp - lease,
            # every worker's lease being the same), which is the order the claims were
            # made in: a later claim of a job needs the earlier's lease expired, or the
            # job queued again at a later run_at.
            unfenced = [c for c in claims if c.fence is None]
            if unfenced:
                violations.append(f"job {job}: {len(unfenced)} claims handed out no fence")
                continue
            for a, b in pairwise(claims):
                pairs += 1
                assert a.fence is not None and b.fence is not None
                if b.exp == a.exp:
                    violations.append(
                        f"job {job}: two claims at one database time (fences {a.fence} and {b.fence})"
                    )
                elif b.fence <= a.fence:
                    violations.append(
                        f"job {job}: fence {b.fence} handed to {b.proc} (attempt {b.attempt}) "
                        f"{b.exp - a.exp:.3f} s after fence {a.fence} went to {a.proc} (attempt {a.attempt})"
                    )
            final = self.jobs[job].fence if job in self.jobs else None
            top = max(c.fence for c in claims if c.fence is not None)
            if final is not None and (final < top or final < len(claims)):
                violations.append(
                    f"job {job}: its final fence {final} is below the {top} handed out "
                    f"or the {len(claims)} claims recorded"
                )
        reclaimed = sum(1 for claims in self.claims_of.values() if len(claims) > 1)
        return Invariant(
            "fences strictly increasing per job: in the order of claim, every fence handed out is above the one before (none repeats)",
            "history (claim answers: fence, claim time on the server clock) + database (final fence)",
            pairs,
            violations,
            f"{pairs} pairs of successive claims of {reclaimed} jobs claimed more than once",
        )

    def _claim_span(self, c: Claim, *, last_t: float | None = None) -> tuple[float, float]:
        """The database's clock from the start of the claim call that handed out `c` (its
        v_now, lease_expires_at - lease) to the latest it could have ended: v_now plus
        the call's whole time from send to recorded answer (on the worker's clock)."""
        start = c.exp - self.config.lease
        t = c.t if last_t is None else last_t
        return start, (start + (t - c.sent)) if c.sent is not None else INF

    def _settings(self, setting: str) -> dict[str, QueueSetting]:
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

    def nothing_from_paused(self) -> Invariant:
        """No claim made, from start to end, while its queue was certainly paused."""
        settings = self._settings("paused")
        violations: list[str] = []
        checked = edge = 0
        for c in self.claims.values():
            job = self.jobs.get(c.job)
            if job is None or job.queue not in settings:
                continue
            checked += 1
            start, end = self._claim_span(c)
            values = settings[job.queue].possible(start, end)
            if values == {True}:
                pause = settings[job.queue].confirmed_before(start)
                violations.append(
                    f"job {c.job} ({job.queue}) claimed by {c.proc} (attempt {c.attempt}) "
                    f"{start - pause:.3f} s after the pause of its queue was confirmed, "
                    "before its resume was sent"
                )
            elif True in values:
                edge += 1
        windows = {q: s.certain_windows(True) for q, s in settings.items()}
        count = sum(len(w) for w in windows.values())
        seconds = sum(b - a for w in windows.values() for a, b in w)
        return Invariant(
            "nothing claimed from a paused queue: no claim ran wholly between a pause's confirmed commit and the sending of its resume",
            "history (the runner's pause and resume calls with the database clock around them; claims on the server clock)",
            checked,
            violations,
            f"{count} pauses confirmed ({seconds:.1f} s paused in all: "
            + ", ".join(f"{q} {len(w)}" for q, w in sorted(windows.items()))
            + f"); {checked} claims of those queues judged, {edge} of them overlapped a pause's "
            "edge (its commit or its resume) and could have seen either state",
        )

    def _is_start(self, y: Claim) -> bool:
        """Did claim `y` certainly start a queued job (rather than reclaim an expired one)?"""
        if y.fence is None:
            return False
        if y.fence == 1:
            return True
        p = self.by_fence.get((y.job, y.fence - 1))
        if p is None:
            return False  # the claim before it is not in the history: unknown
        # p's fail or release was applied, so it came before y: y took a queued job.
        if any(e["answer"] is not None for e in self.fails.get(p.token, [])):
            return True
        if any(e["answer"] for e in self.releases.get(p.token, [])):
            return True
        lease = self.config.lease
        return any(
            p.exp - lease < e["sent_db"] < y.exp - lease
            for e in self.retries.get(y.job, [])
            if e.get("sent_db") is not None
        )

    def _may_have_left(self, x: Claim, until: float, db_until: float) -> bool:
        """Could the job of claim `x` have stopped running after `x` was made and before
        `until` (wall clock; `db_until` on the database's): a complete, fail or release
        sent by x's token or a later one, a cancel, or a burial by claim."""
        for sent, claim_exp in self.leave_sends.get(x.job, []):
            if claim_exp >= x.exp and sent <= until:
                return True
        for e in self.cancels.get(x.job, []):
            if _may_have_applied(e) and e["sent"] <= until and e["t"] >= x.sent:
                return True
        job = self.jobs[x.job]
        claimed_at = x.exp - self.config.lease
        for err in job.errors:
            at = _error_at(err)
            if (
                err.get("error") == "lease expired"
                and at is not None
                and claimed_at <= at <= db_until
            ):
                return True
        return False

    def queue_limits(self) -> Invariant:
        """No claim left more jobs of its queue running than the limit it read.

        claim counts the queue's running jobs under a lock on the queue's row, held
        until it commits, so right after a claim that started queued jobs commits, at
        most the limit it read are running. Checked for every claim call that
        certainly started queued jobs (not reclaims), alone and paired with each call
        of the same queue that ran at the same time (two racing claims that both
        counted before either committed show only together): the jobs certainly
        running when the later of them committed (each claimed before that call was
        sent, its lease live at the call's start, no complete, fail, release, cancel
        or burial sent before the answers) plus the jobs they started never exceed
        the largest limit either may have read; a call that may have read no limit
        is not judged.
        """
        settings = self._settings("limit")
        lease = self.config.lease
        rows_of: dict[tuple[str, float, float], list[Claim]] = defaultdict(list)
        index: dict[str, dict[int, list[Claim]]] = {q: defaultdict(list) for q in settings}
        for c in self.claims.values():
            job = self.jobs.get(c.job)
            if job is None or job.queue not in settings or c.sent is None:
                continue
            rows_of[(c.proc, c.sent, c.exp)].append(c)
            for second in range(int(c.exp - lease), int(c.deadline) + 1):
                index[job.queue][second].append(c)
        calls: dict[str, list[StartCall]] = defaultdict(list)
        unlimited = 0
        for (proc, sent, _), rows in rows_of.items():
            starts = [y for y in rows if self._is_start(y)]
            if not starts:
                continue
            queue = self.jobs[rows[0].job].queue
            last_t = max(y.t for y in rows)
            start, end = self._claim_span(rows[0], last_t=last_t)
            limits = settings[queue].possible(start, end)
            if None in limits:
                unlimited += 1
                continue
            calls[queue].append(StartCall(proc, sent, last_t, start, end, rows, starts, limits))
        violations: list[str] = []
        judged = pairs = binding = straddled = started = 0
        for queue, queue_calls in calls.items():
            queue_calls.sort(key=lambda call: call.sent)
            for i, call in enumerate(queue_calls):
                judged += 1
                started += len(call.starts)
                straddled += len(call.limits) > 1
                group = [[call]]
                for other in queue_calls[i + 1 :]:
                    if other.sent >= call.last_t:
                        break
                    group.append([call, other])  # sent before call's answer: they overlap
                pairs += len(group) - 1
                for together in group:
                    total, limit, running, starts = self._running_after(together, index[queue])
                    if total > limit:
                        who = " and ".join(f"{c.proc}'s claim" for c in together)
                        before = (
                            f"{len(running)} were certainly running "
                            f"({', '.join(str(x.job) for x in running[:4])})"
                            if running
                            else "none was certainly running"
                        )
                        violations.append(
                            f"{queue}: {who} started {len(starts)} jobs "
                            f"({', '.join(str(y.job) for y in starts[:4])}) while {before}: "
                            f"{total} running, limit {limit}"
                        )
                    elif total == limit and len(together) == 1:
                        binding += 1
        return Invariant(
            "never more running than a queue's limit: no claim left more jobs of its queue running than the limit it read, alone or racing another",
            "history (the runner's limit calls with the database clock around them; claims, fences and settle calls) + database (burials)",
            judged + pairs,
            violations,
            f"{judged} claim calls started {started} jobs under a limit they certainly read "
            f"({straddled} of them while it changed: judged by the larger), and {pairs} pairs "
            f"of them ran at the same time; at {binding} calls the running jobs the history "
            f"proves plus those started reached the limit exactly; {unlimited} claim calls "
            "that started jobs may have read no limit",
        )

    def _running_after(
        self, together: list[StartCall], index: dict[int, list[Claim]]
    ) -> tuple[int, int, list[Claim], list[Claim]]:
        """The jobs certainly running when the later of `together` committed (those before
        it, those it and its partner started), the largest limit either may have read."""
        sent = max(c.sent for c in together)
        until = max(c.last_t for c in together)
        db_from = max(c.db_start for c in together)
        db_until = max(c.db_end for c in together)
        limit = max(v for c in together for v in c.limits if v is not None)
        mine = {y.job for c in together for y in c.rows}
        latest: dict[int, Claim] = {}
        for x in index.get(int(db_from), []):
            if x.job in mine or x.t >= sent or x.deadline <= db_from:
                continue
            if x.job not in latest or x.exp > latest[x.job].exp:
                latest[x.job] = x
        running = [x for x in latest.values() if not self._may_have_left(x, until, db_until)]
        starts = [y for c in together for y in c.starts]
        if len(together) > 1:
            starts = [y for y in starts if not self._may_have_left(y, until, db_until)]
        return len(running) + len(starts), limit, running, starts

    # -- periodic jobs -------------------------------------------------------------------

    def _able(self) -> dict[str, list[tuple[float, float]]]:
        """When each worker certainly could run its scheduler (the wall clock): from its
        loop's start to its exit or the stop of every worker, minus its SIGSTOPs, the
        server's restarts (until its control connection was back) and every other
        stretch its control connection spent failing."""
        stopping = min((e["t"] for e in self.by["stopping"]), default=INF)
        started = {e["proc"]: e["t"] for e in self.by["worker_started"]}
        gaps: dict[str, list[tuple[float, float]]] = defaultdict(list)
        stop_begin: dict[str, float] = {}
        for e in self.faults:
            if e["kind"] == "stop":
                stop_begin[e["target"]] = e.get("at", e["t"])
            elif e["kind"] == "cont":
                gaps[e["target"]].append((stop_begin.pop(e["target"], e["t"]), e["t"]))
        for target, begin in stop_begin.items():
            gaps[target].append((begin, INF))
        ups: dict[str, list[float]] = defaultdict(list)
        for e in self.by["control_up"]:
            ups[e["proc"]].append(e["t"])
        breaks = sorted(
            [e["t"] for e in self.by["fault_begin"]]
            + [e.get("at", e["t"]) for e in self.faults if e["kind"] == "terminate"]
        )
        for e in self.by["control_down"]:
            # Down from the fault that broke it (a restart, a terminate) or its report.
            before = [t for t in breaks if t <= e["t"]]
            begin = min(before[-1] if before else e["t"], e["t"])
            up = min((t for t in ups[e["proc"]] if t >= e["t"]), default=INF)
            gaps[e["proc"]].append((begin, up))
        for _, begin, end in self.restart_windows:
            for proc in started:
                up = min((t for t in ups[proc] if t >= begin), default=end)
                gaps[proc].append((begin, max(end, up)))
        able: dict[str, list[tuple[float, float]]] = {}
        for proc, t0 in started.items():
            exit_event = self.exits.get(proc)
            t1 = min(exit_event["t"] if exit_event else INF, stopping)
            spans = [(t0, t1)]
            for a, b in sorted(gaps[proc]):
                spans = [
                    piece
                    for x, y in spans
                    for piece in ((x, min(y, a)), (max(x, b), y))
                    if piece[0] < piece[1]
                ]
            able[proc] = spans
        return able

    def periodic_slots(self) -> Invariant:
        """Every slot of the soak's schedule from its first job to its last has exactly one
        job, but for slots no worker could have sent: none had a working control connection
        for SCHEDULER_PASS_S from the slot on (all down, stopped or cut off)."""
        period = float(PERIODIC_EVERY_S)
        jobs = sorted(
            (j for j in self.jobs.values() if j.task == PERIODIC_TASK and j.run_at is not None),
            key=lambda j: j.run_at or 0.0,
        )
        violations: list[str] = []
        by_slot: dict[float, list[int]] = defaultdict(list)
        for j in jobs:
            assert j.run_at is not None
            slot = round(j.run_at, 3)
            if abs(slot / period - round(slot / period)) > 1e-6:
                violations.append(f"job {j.id} is for {slot:.3f}, which is no slot of the schedule")
            by_slot[slot].append(j.id)
        for slot, ids in sorted(by_slot.items()):
            if len(ids) > 1:
                violations.append(f"slot {_utc(slot)} has {len(ids)} jobs: {ids}")
        enqueued: dict[str, list[str]] = defaultdict(list)
        for e in self.by["periodic"]:
            enqueued[e["slot"]].append(f"{e['proc']} job {e['job']}")
        for slot_text, who in enqueued.items():
            if len(who) > 1:
                violations.append(f"slot {slot_text} enqueued more than once: {', '.join(who)}")
        missing = excused = 0
        expected = 0
        if jobs:
            able = self._able()
            first, last = min(by_slot), max(by_slot)
            slot = first
            while slot <= last + 1e-6:
                expected += 1
                key = round(slot, 3)
                if key not in by_slot:
                    # Could some worker run its scheduler from the slot to the next?
                    up = [
                        proc
                        for proc, spans in able.items()
                        if any(
                            a <= slot - CLOCK_SLACK_S and slot + SCHEDULER_PASS_S <= b
                            for a, b in spans
                        )
                    ]
                    if up:
                        missing += 1
                        violations.append(
                            f"slot {_utc(slot)} has no job although {', '.join(sorted(up)[:3])} "
                            f"could run the scheduler for {SCHEDULER_PASS_S:g} s from it"
                        )
                    else:
                        excused += 1
                slot += period
            row = self.schedules.get(PERIODIC_SCHEDULE)
            if row is None:
                violations.append(f"taskboard.schedules has no row for {PERIODIC_SCHEDULE}")
            elif abs(row[0] - last) > CLOCK_SLACK_S or row[1] != by_slot[last][-1]:
                violations.append(
                    f"taskboard.schedules says {PERIODIC_SCHEDULE}'s last slot is {_utc(row[0])} "
                    f"(job {row[1]}); its last job is {by_slot[last][-1]} for {_utc(last)}"
                )
            stopping = min((e["t"] for e in self.by["stopping"]), default=INF)
            if stopping < INF and last < stopping - 2 * period - 1.0:
                violations.append(
                    f"the last slot with a job, {_utc(last)}, is {stopping - last:.1f} s before "
                    "the workers were stopped"
                )
        else:
            violations.append(f"no job of {PERIODIC_SCHEDULE} at all")
        return Invariant(
            "exactly one job per schedule slot: every slot from the first to the last has one job, none two; a slot may lack one only when no worker could send it (all down, stopped or cut off)",
            "database (periodic jobs' run_at, taskboard.schedules) + history (the workers' scheduler log records, their control connection, the runner's faults)",
            expected,
            violations,
            f"{len(jobs)} jobs for {expected} slots ({period:g} s apart) of {PERIODIC_SCHEDULE}; "
            f"{excused} slots without a job while no worker could send it (by design only "
            "the latest of the slots missed then is enqueued, when a worker is back)",
        )

    # -- concurrency beyond connections ------------------------------------------------

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

    def concurrency(self) -> Invariant:
        """Handlers never beyond a worker's slots; a worker with a transactional task has
        no more slots than handler connections; server connections never beyond the pool;
        and a plain-only worker ran more handlers at once than its handler connections."""
        violations: list[str] = []
        shapes = self.worker_shapes()
        for w in shapes:
            handler_conns = w["pool_size"] - 2
            if w["connections"] is not None and w["connections"] != w["pool_size"]:
                violations.append(
                    f"{w['name']} reported {w['connections']} connections, spawned with "
                    f"pool_size {w['pool_size']}"
                )
            if w["slots"] is not None and w["peak"] > w["slots"]:
                violations.append(
                    f"{w['name']} ran {w['peak']} handlers at once with {w['slots']} slots"
                )
            if w["group"] != "plain" and w["slots"] is not None and w["slots"] > handler_conns:
                violations.append(
                    f"{w['name']} has a transactional task and {w['slots']} slots for its "
                    f"{handler_conns} handler connections"
                )
            if w["conns"] > w["pool_size"]:
                violations.append(
                    f"{w['name']} held {w['conns']} server connections at once with "
                    f"pool_size {w['pool_size']}"
                )
        sampled = self.by["conns_sampled"]
        samples = sum(e["samples"] for e in sampled)
        plain = [w for w in shapes if w["group"] == "plain"]
        if plain:
            if not any(w["peak"] > w["pool_size"] - 2 for w in plain):
                most = max(w["peak"] for w in plain)
                violations.append(
                    f"no plain-only worker ran more handlers at once than its handler "
                    f"connections (at most {most} at once)"
                )
            if not any(w["conns"] for w in plain):
                violations.append("no sample of pg_stat_activity saw a plain-only worker")
        return Invariant(
            "concurrency beyond connections: no worker ran more handlers at once than its "
            "slots, one with a transactional task has no more slots than handler connections, "
            "none held more server connections than its pool_size, and a plain-only worker "
            "ran more handlers at once than its handler connections",
            "worker log (slots, connections) + history (handlers running) + runner history "
            "(pg_stat_activity sampled by application_name)",
            len(shapes),
            violations,
            f"{len(shapes)} worker processes; {samples} samples of pg_stat_activity"
            if shapes
            else "no worker recorded its pool (a run recorded before plain-only workers)",
        )

    # -- tables ----------------------------------------------------------------------

    def fault_rows(self) -> list[FaultRow]:
        rows: dict[str, FaultRow] = {}
        order = ["kill", "stop", "terminate", "restart-fast", "restart-immediate", "cancel"]
        for kind in order:
            rows[kind] = FaultRow(kind)
        for f in self.plan.faults:
            rows[f.kind].planned += 1
        for e in self.faults:
            if e["kind"] in rows:
                rows[e["kind"]].injected += 1
        for e in self.by["fault_end"]:
            rows[e["kind"]].injected += 1 if e.get("ok") else 0
        for e in self.by["fault_skipped"] + self.by["op_skipped"]:
            if e["kind"] in rows:
                rows[e["kind"]].skipped += 1
        hit: dict[str, int] = defaultdict(int)
        for c in self.claims.values():
            for kind in c.touched_by:
                hit[kind] += 1
        for kind, row in rows.items():
            row.claims_hit = hit.get(kind, 0)
        cancels = [e for events in self.cancels.values() for e in events]
        rows["cancel"].injected = len(cancels)
        rows["cancel"].note = (
            f"app.cancel: {sum(1 for e in cancels if e['answer'])} cancelled "
            f"({sum(1 for e in cancels if e['answer'] and e['was'] == 'running')} while running)"
        )
        rows["kill"].note = "kill -9 mid-handler, a replacement started"
        lease = self.config.lease
        rows[
            "stop"
        ].note = f"SIGSTOP for {lease * 1.3:g}-{lease * 2.5:g} s (lease {lease:g} s), then SIGCONT"
        cut = sum(e["terminated"] for e in self.faults if e["kind"] == "terminate")
        rows["terminate"].note = f"pg_terminate_backend on {cut} worker connections"
        for kind in ("restart-fast", "restart-immediate"):
            if not self.server_own:
                rows[kind].note = "skipped: the server is not the soak's own"
            else:
                mode = kind.split("-")[1]
                shutdown = f"{mode} shutdown (as pg_ctl stop -m {mode})"
                rows[kind].note = f"{shutdown}, down 0.2-1.5 s, start"
        hold = [c for c in self.claims.values() if c.task == "ledger.post" and self._holds(c)]
        long = [c for c in self.claims.values() if c.task == "batch.long"]
        out = [rows[k] for k in order]
        out += self.operation_rows()
        out.append(
            FaultRow(
                "pool-hold",
                planned=sum(1 for b in self.plan.batches for p in b.payloads if "hold" in p),
                injected=len(hold),
                note="transactional handler blocking its pool connection 1.2-2 leases (pg_sleep)",
            )
        )
        out.append(
            FaultRow(
                "long-handler",
                planned=sum(
                    1 for b in self.plan.batches if b.task == "batch.long" for _ in b.payloads
                ),
                injected=len(long),
                note="handler running 1.5-3 leases: renewal must carry it",
            )
        )
        return out

    def operation_rows(self) -> list[FaultRow]:
        """Pauses, limits and retries: what the runner did through the management API."""
        rows = {kind: FaultRow(kind) for kind in ("pause", "limit", "retry")}
        for o in self.plan.operations:
            if o.kind in rows:
                rows[o.kind].planned += 1
        for e in self.ops:
            if e["kind"] in rows:
                rows[e["kind"]].injected += 1
        for e in self.by["op_skipped"]:
            if e["kind"] in rows:
                rows[e["kind"]].skipped += 1
        paused = self._settings("paused")
        windows = {q: s.certain_windows(True) for q, s in paused.items()}
        seconds = [b - a for w in windows.values() for a, b in w]
        # claims hit: claims held across a pause (renewed and settled while it lasted)
        for c in self.claims.values():
            job = self.jobs.get(c.job)
            start = c.exp - self.config.lease
            held_until = start + (c.close - c.sent) if c.close < INF else INF
            if job is not None and any(
                a <= held_until and start <= b for a, b in windows.get(job.queue, [])
            ):
                rows["pause"].claims_hit += 1
        resumes = [e for e in self.ops if e["kind"] == "resume"]
        rows["pause"].note = (
            f"app.pause, then app.resume ({len(resumes)} sent); {len(seconds)} confirmed, "
            + (f"paused {min(seconds):.1f}-{max(seconds):.1f} s" if seconds else "none")
        )
        limits = [e for e in self.ops if e["kind"] == "limit"]
        per_queue: dict[str, list[str]] = defaultdict(list)
        for e in limits:
            per_queue[e["queue"]].append("none" if e["limit"] is None else str(e["limit"]))
        rows["limit"].note = "app.set_queue_limit: " + "; ".join(
            f"{q} {' > '.join(v)}" for q, v in sorted(per_queue.items())
        )
        retried = [e for e in self.ops if e["kind"] == "retry"]
        again = {e["job"] for e in retried if e["answer"]}
        rows["retry"].claims_hit = sum(
            1
            for job in again
            for c in self.claims_of.get(job, [])
            if c.exp - self.config.lease > min(r.get("sent_db") or INF for r in self.retries[job])
        )
        rows["retry"].note = (
            f"app.retry of a dead or cancelled job: {len(again)} queued again "
            f"({sum(1 for e in retried if e['answer'] and e['was'] == 'dead')} dead, "
            f"{sum(1 for e in retried if e['answer'] and e['was'] == 'cancelled')} cancelled); "
            "claims hit: their claims since"
        )
        return list(rows.values())

    def _holds(self, c: Claim) -> bool:
        job = self.jobs.get(c.job)
        return job is not None and job.holds

    def stats(self) -> dict[str, Any]:
        phase = self.phase.get("faults", {})
        t0, t1 = phase.get("start", 0.0), phase.get("end", 0.0)
        finished = sorted(j.finished_at for j in self.jobs.values() if j.finished_at is not None)
        last = finished[-1] if finished else t0
        # Steady load: what the producers offered, and whether the workers kept up.
        steady_end = t0 + self.config.steady_seconds
        steady_requests = sum(len(e["rids"]) for e in self.by["enqueue"] if e["t"] < steady_end)
        steady_done = sum(1 for f in finished if t0 <= f < steady_end)
        # The burst: saturated work under faults, from the burst until 95 % of all jobs finished.
        t95 = finished[int(len(finished) * 0.95) - 1] if finished else t0
        burst_requests = sum(len(e["rids"]) for e in self.by["enqueue"] if e["t"] >= steady_end)
        burst_window = max(t95 - steady_end, 0.0)
        burst_done = sum(1 for f in finished if steady_end <= f <= t95)
        fault_times = [e["t"] for e in self.faults if e["kind"] != "cont"]
        fault_times += [e["t"] for events in self.cancels.values() for e in events]
        fault_times += [e["t"] for e in self.by["fault_begin"]]
        faults_in_burst = sum(1 for t in fault_times if steady_end <= t <= t95)
        effect_jobs = self._effect_jobs()
        dup = {job: toks for job, toks in effect_jobs.items() if len(toks) > 1}
        extra = sum(len(t) - 1 for t in dup.values())
        states: dict[str, int] = defaultdict(int)
        for j in self.jobs.values():
            states[j.state] += 1
        touched_jobs = sum(1 for job in self.claims_of if self.job_touched(job))
        unexpected_dead = [
            j for j in self.jobs.values() if j.state == "dead" and j.task != "doomed"
        ]
        return {
            "jobs": len(self.jobs),
            "states": dict(states),
            "claims": len(self.claims),
            "fault_seconds": t1 - t0,
            "steady_seconds": self.config.steady_seconds,
            "steady_offered": steady_requests / self.config.steady_seconds,
            "steady_rate": steady_done / self.config.steady_seconds,
            "max_backlog": max((e["backlog"] for e in self.by["progress"]), default=None),
            "burst_requests": burst_requests,
            "burst_seconds": burst_window,
            "burst_rate": burst_done / burst_window if burst_window > 0 else 0.0,
            "faults_in_burst": faults_in_burst,
            "rate_overall": len(finished) / (last - t0) if last > t0 else 0.0,
            "last_fault_after": (max(fault_times) - t0) if fault_times else 0.0,
            "last_finish_after": last - t0,
            "effect_jobs": len(effect_jobs),
            "dup_jobs": len(dup),
            "dup_extra_effects": extra,
            "dup_rate": len(dup) / len(effect_jobs) if effect_jobs else 0.0,
            "dup_untouched": sum(1 for job in dup if not self.job_touched(job)),
            "touched_jobs": touched_jobs,
            "dup_share_of_touched": len(dup) / touched_jobs if touched_jobs else 0.0,
            "dup_same_ikey": sum(
                1 for toks in dup.values() if len({self.effects[t][0]["ikey"] for t in toks}) == 1
            ),
            "lost": len(self.lost),
            "renew_refused": len(self.renew_refused),
            "enqueue_errors": len(self.by["enqueue_error"]),
            "unexpected_dead": len(unexpected_dead),
            "unexpected_dead_examples": [
                f"job {j.id} ({j.task}): "
                + "; ".join(str(e.get("error"))[:80] for e in j.errors[-3:])
                for j in unexpected_dead[:EXAMPLES]
            ],
            "skips": len(self.by["skip"]),
            "settle_errors": len(self.by["settle_error"]),
            "fail_errors": _count_errors(self.jobs.values()),
            "groups": self._group_stats(),
            "conn_samples": sum(e["samples"] for e in self.by["conns_sampled"]),
        }

    def _group_stats(self) -> dict[str, dict[str, Any]]:
        """Per group of workers (plain, all): processes, pools, slots, the most handlers
        one ran at once, the most server connections one was seen holding, and the
        process faults that hit them."""
        groups: dict[str, dict[str, Any]] = {}
        for w in self.worker_shapes():
            g = groups.setdefault(
                w["group"],
                {
                    "processes": 0,
                    "pool_size": set(),
                    "slots": set(),
                    "peak": 0,
                    "conns": 0,
                    "faults": defaultdict(int),
                },
            )
            g["processes"] += 1
            for e in self.faults:
                if e.get("target") == w["name"] and e["kind"] in ("kill", "stop", "terminate"):
                    g["faults"][e["kind"]] += 1
            g["pool_size"].add(w["pool_size"])
            if w["slots"] is not None:
                g["slots"].add(w["slots"])
            g["peak"] = max(g["peak"], w["peak"])
            g["conns"] = max(g["conns"], w["conns"])
        return groups


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


def _utc(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%H:%M:%S.%f")[:-3]


def _may_have_applied(op: dict[str, Any]) -> bool:
    """A management call answered true, or one whose answer was lost with its connection."""
    return bool(op.get("answer")) or bool(op.get("error"))


def _error_at(error: dict[str, Any]) -> float | None:
    """When an `errors` entry was recorded, on the database's clock, in epoch seconds."""
    at = error.get("at")
    if not isinstance(at, str):
        return None
    try:
        return dt.datetime.fromisoformat(at).timestamp()
    except ValueError:
        return None


def _count_errors(jobs: Iterable[Job]) -> dict[str, int]:
    """How often each kind of error was recorded by fail or burial (first words)."""
    counts: dict[str, int] = defaultdict(int)
    for j in jobs:
        for e in j.errors:
            text = str(e.get("error"))
            counts[text.split(":")[0][:60]] += 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
