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

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from soak.history import read_events
from soak.index import (
    EXAMPLES,
    INF,
    Claim,
    HistoryIndex,
    count_errors,
)
from soak.invariants import INVARIANTS, Invariant
from soak.plan import Config, Plan

CONNECTION_ERRORS = (
    "OperationalError",
    "AdminShutdown",
    "CrashShutdown",
    "PoolTimeout",
    "InterfaceError",
)


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


JOBS_SQL = """
SELECT id, queue, task, state, attempt, max_attempts, dedupe_key, lease_token::text,
       payload->>'rid', extract(epoch FROM finished_at)::float8, errors, payload ? 'hold',
       fence, extract(epoch FROM run_at)::float8, concurrency_key,
       extract(epoch FROM started_at)::float8, on_dependency_failure
  FROM taskboard.jobs
 ORDER BY id
"""
# Each reclaim's database time (its claim's clock) and the fence of the lease it took
# over: the reclaim handed out that fence + 1.
RECLAIMS_SQL = """
SELECT job_id, fence + 1, extract(epoch FROM at)::float8
  FROM taskboard.job_events
 WHERE kind = 'reclaimed'
 ORDER BY job_id, fence
"""
DEDUPE_INDEX_SQL = """
SELECT i.indisunique, i.indisvalid, i.indisready, pg_get_indexdef(i.indexrelid)
  FROM pg_index AS i
 WHERE i.indexrelid = 'taskboard.jobs_unfinished_task_dedupe_key'::regclass
"""


def snapshot(admin_url: str) -> dict[str, Any]:
    """The final database as superuser sees it: jobs (with their lease tokens), ledger, index,
    the reclaims that job_events recorded."""
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
            "reclaims": [list(r) for r in conn.execute(RECLAIMS_SQL).fetchall()],
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
    return check(HistoryIndex(config, plan, events, final, server_own))


def check(h: HistoryIndex) -> Result:
    """Every invariant over the index, the findings, and the report's tables."""
    invariants = [invariant(h) for invariant in INVARIANTS]
    find_stale_pool_connections(h)
    find_dropped_completions(h)
    find_fail_answers_lost(h)
    return Result(invariants, fault_rows(h), stats(h), h.findings, h.server_version)


# -- findings: not invariants, but what a reviewer should hear about -----------------


def find_stale_pool_connections(h: HistoryIndex) -> None:
    """Attempts that failed on a connection error although no fault overlapped them."""
    hits: list[tuple[Claim, str]] = []
    for c in h.claims.values():
        if c.touched_by:
            continue
        for error in h.attempt_errors(c):
            if error.startswith(CONNECTION_ERRORS) or error.startswith("NotHolder"):
                hits.append((c, error))
    if not hits:
        return
    ends = sorted(e["t"] for e in h.by["fault_end"])
    terminates = sorted((e["t"], e["target"]) for e in h.faults if e["kind"] == "terminate")
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
        1 for hit, _ in hits if h.jobs[hit.job].state == "dead" and h.jobs[hit.job].task != "doomed"
    )
    h.findings.append(
        f"stale-pool-connection: {len(hits)} attempts failed on a handler-pool connection that had died "
        f"earlier (no fault overlapped the attempt): {dict(tasks)}; {dead} of their jobs ended dead. "
        f"Example: job {c.job} attempt {c.attempt} on {c.proc}, claimed {since}, failed with "
        f"'{error[:90]}'. With the handler pool checking connections before use "
        "(worker.py: check=AsyncConnectionPool.check_connection) this should stay at zero."
    )


def find_dropped_completions(h: HistoryIndex) -> None:
    """Handlers that finished, then lost the job to the watchdog before their complete got an answer."""
    dropped: list[Claim] = []
    for token, e in h.lost.items():
        c = h.claims[token]
        if not e["why"].startswith("no successful renewal"):
            continue
        effects = h.effects.get(token, [])
        if not effects or effects[0]["t"] > e["t"]:
            continue
        if any(x["answer"] for x in h.completes.get(token, [])):
            continue
        if any(x["sent"] <= e["t"] for x in h.completes.get(token, [])):
            continue  # sent before the loss: the database answered it
        dropped.append(c)
    if not dropped:
        return
    ran_again = [
        c
        for c in dropped
        if any(h.effects.get(x.token) for x in h.claims_of[c.job] if x.exp > c.exp)
    ]
    # Reclaimed only after this worker had given the job up: its complete, sent once the
    # connection was back, would have been accepted had it arrived before that reclaim.
    unclaimed = [
        c
        for c in ran_again
        if all(x.t > h.lost[c.token]["t"] for x in h.claims_of[c.job] if x.exp > c.exp)
    ]
    c = (unclaimed or dropped)[0]
    h.findings.append(
        f"dropped-completion: {len(dropped)} handlers had finished (effect done) when the "
        "watchdog gave their job up (no successful renewal: the worker was stopped or cut "
        f"off), and their completion was never sent; {len(ran_again)} of those jobs ran again "
        f"(a second effect), {len(unclaimed)} of them reclaimed only after the worker had given "
        f"them up. Example: job {c.job} attempt {c.attempt} on {c.proc}. complete is fenced: "
        "sent once the connection was back, it would have been accepted had nobody reclaimed "
        "the job yet, and refused otherwise."
    )


def find_fail_answers_lost(h: HistoryIndex) -> None:
    """fail answered NULL because an earlier send of the same fail had been applied."""
    resent = []
    for token, events in h.fails.items():
        c = h.claims.get(token)
        if c is None:
            continue
        for e in events:
            if (
                e["answer"] is None
                and h.broke_off.get(token)
                and any(not err.startswith("lease expired") for err in h.attempt_errors(c))
            ):
                resent.append(c)
    if resent:
        c = resent[0]
        h.findings.append(
            f"fail-resent: {len(resent)} fail calls were sent again after the connection broke while "
            "the first send had already been applied; the second got NULL and the worker logged "
            f"'fail of job ... refused' and counted it stale. Example: job {c.job} attempt {c.attempt} "
            f"on {c.proc}."
        )


# -- tables ----------------------------------------------------------------------


def fault_rows(h: HistoryIndex) -> list[FaultRow]:
    rows: dict[str, FaultRow] = {}
    order = ["kill", "stop", "terminate", "restart-fast", "restart-immediate", "cancel"]
    for kind in order:
        rows[kind] = FaultRow(kind)
    for f in h.plan.faults:
        rows[f.kind].planned += 1
    for e in h.faults:
        if e["kind"] in rows:
            rows[e["kind"]].injected += 1
    for e in h.by["fault_end"]:
        rows[e["kind"]].injected += 1 if e.get("ok") else 0
    for e in h.by["fault_skipped"] + h.by["op_skipped"]:
        if e["kind"] in rows:
            rows[e["kind"]].skipped += 1
    hit: dict[str, int] = defaultdict(int)
    for c in h.claims.values():
        for kind in c.touched_by:
            hit[kind] += 1
    for kind, row in rows.items():
        row.claims_hit = hit.get(kind, 0)
    cancels = [e for events in h.cancels.values() for e in events]
    rows["cancel"].injected = len(cancels)
    rows["cancel"].note = (
        f"app.cancel: {sum(1 for e in cancels if e['answer'])} cancelled "
        f"({sum(1 for e in cancels if e['answer'] and e['was'] == 'running')} while running)"
    )
    rows["kill"].note = "kill -9 mid-handler, a replacement started"
    lease = h.config.lease
    rows[
        "stop"
    ].note = f"SIGSTOP for {lease * 1.3:g}-{lease * 2.5:g} s (lease {lease:g} s), then SIGCONT"
    cut = sum(e["terminated"] for e in h.faults if e["kind"] == "terminate")
    rows["terminate"].note = f"pg_terminate_backend on {cut} worker connections"
    for kind in ("restart-fast", "restart-immediate"):
        if not h.server_own:
            rows[kind].note = "skipped: the server is not the soak's own"
        else:
            mode = kind.split("-")[1]
            shutdown = f"{mode} shutdown (as pg_ctl stop -m {mode})"
            rows[kind].note = f"{shutdown}, down 0.2-1.5 s, start"
    for kind in ("kill", "stop"):
        aimed = sum(1 for e in h.faults if e["kind"] == kind and "aimed" in e)
        rows[kind].note += f"; {aimed} aimed at the holder of a job others wait for"
    aimed = sum(1 for e in cancels if e.get("aimed") and e["answer"])
    rows["cancel"].note += f"; {aimed} of jobs others wait for"
    hold = [c for c in h.claims.values() if c.task == "ledger.post" and _holds(h, c)]
    long = [c for c in h.claims.values() if c.task == "batch.long"]
    out = [rows[k] for k in order]
    out += operation_rows(h)
    out.append(
        FaultRow(
            "pool-hold",
            planned=sum(1 for b in h.plan.batches for p in b.payloads if "hold" in p),
            injected=len(hold),
            note="transactional handler blocking its pool connection 1.2-2 leases (pg_sleep)",
        )
    )
    out.append(
        FaultRow(
            "long-handler",
            planned=sum(
                1 for b in h.plan.batches for task, _, _ in b.jobs() if task == "batch.long"
            ),
            injected=len(long),
            note="handler running 1.5-3 leases: renewal must carry it",
        )
    )
    return out


def operation_rows(h: HistoryIndex) -> list[FaultRow]:
    """Pauses, limits and retries: what the runner did through the management API."""
    rows = {kind: FaultRow(kind) for kind in ("pause", "limit", "retry")}
    for o in h.plan.operations:
        if o.kind in rows:
            rows[o.kind].planned += 1
    for e in h.ops:
        if e["kind"] in rows:
            rows[e["kind"]].injected += 1
    for e in h.by["op_skipped"]:
        if e["kind"] in rows:
            rows[e["kind"]].skipped += 1
    paused = h.queue_settings("paused")
    windows = {q: s.certain_windows(True) for q, s in paused.items()}
    seconds = [b - a for w in windows.values() for a, b in w]
    # claims hit: claims held across a pause (renewed and settled while it lasted)
    for c in h.claims.values():
        job = h.jobs.get(c.job)
        start = c.exp - h.config.lease
        held_until = start + (c.close - c.sent) if c.close < INF else INF
        if job is not None and any(
            a <= held_until and start <= b for a, b in windows.get(job.queue, [])
        ):
            rows["pause"].claims_hit += 1
    resumes = [e for e in h.ops if e["kind"] == "resume"]
    rows["pause"].note = (
        f"app.pause, then app.resume ({len(resumes)} sent); {len(seconds)} confirmed, "
        + (f"paused {min(seconds):.1f}-{max(seconds):.1f} s" if seconds else "none")
    )
    limits = [e for e in h.ops if e["kind"] == "limit"]
    per_queue: dict[str, list[str]] = defaultdict(list)
    for e in limits:
        per_queue[e["queue"]].append("none" if e["limit"] is None else str(e["limit"]))
    rows["limit"].note = "app.set_queue_limit: " + "; ".join(
        f"{q} {' > '.join(v)}" for q, v in sorted(per_queue.items())
    )
    retried = [e for e in h.ops if e["kind"] == "retry"]
    again = {e["job"] for e in retried if e["answer"]}
    rows["retry"].claims_hit = sum(
        1
        for job in again
        for c in h.claims_of.get(job, [])
        if c.exp - h.config.lease > min(r.get("sent_db") or INF for r in h.retries[job])
    )
    rows["retry"].note = (
        f"app.retry of a dead or cancelled job: {len(again)} queued again "
        f"({sum(1 for e in retried if e['answer'] and e['was'] == 'dead')} dead, "
        f"{sum(1 for e in retried if e['answer'] and e['was'] == 'cancelled')} cancelled); "
        "claims hit: their claims since"
    )
    return list(rows.values())


def _holds(h: HistoryIndex, c: Claim) -> bool:
    job = h.jobs.get(c.job)
    return job is not None and job.holds


def stats(h: HistoryIndex) -> dict[str, Any]:
    phase = h.phase.get("faults", {})
    t0, t1 = phase.get("start", 0.0), phase.get("end", 0.0)
    finished = sorted(j.finished_at for j in h.jobs.values() if j.finished_at is not None)
    last = finished[-1] if finished else t0
    # Steady load: what the producers offered, and whether the workers kept up.
    steady_end = t0 + h.config.steady_seconds
    steady_requests = sum(len(e["rids"]) for e in h.by["enqueue"] if e["t"] < steady_end)
    steady_done = sum(1 for f in finished if t0 <= f < steady_end)
    # The burst: saturated work under faults, from the burst until 95 % of all jobs finished.
    t95 = finished[int(len(finished) * 0.95) - 1] if finished else t0
    burst_requests = sum(len(e["rids"]) for e in h.by["enqueue"] if e["t"] >= steady_end)
    burst_window = max(t95 - steady_end, 0.0)
    burst_done = sum(1 for f in finished if steady_end <= f <= t95)
    fault_times = [e["t"] for e in h.faults if e["kind"] != "cont"]
    fault_times += [e["t"] for events in h.cancels.values() for e in events]
    fault_times += [e["t"] for e in h.by["fault_begin"]]
    faults_in_burst = sum(1 for t in fault_times if steady_end <= t <= t95)
    effect_jobs = h.effect_jobs()
    dup = {job: toks for job, toks in effect_jobs.items() if len(toks) > 1}
    extra = sum(len(t) - 1 for t in dup.values())
    states: dict[str, int] = defaultdict(int)
    for j in h.jobs.values():
        states[j.state] += 1
    touched_jobs = sum(1 for job in h.claims_of if h.job_touched(job))
    unexpected_dead = [j for j in h.jobs.values() if j.state == "dead" and j.task != "doomed"]
    return {
        "jobs": len(h.jobs),
        "states": dict(states),
        "claims": len(h.claims),
        "fault_seconds": t1 - t0,
        "steady_seconds": h.config.steady_seconds,
        "steady_offered": steady_requests / h.config.steady_seconds,
        "steady_rate": steady_done / h.config.steady_seconds,
        "max_backlog": max((e["backlog"] for e in h.by["progress"]), default=None),
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
        "dup_untouched": sum(1 for job in dup if not h.job_touched(job)),
        "touched_jobs": touched_jobs,
        "dup_share_of_touched": len(dup) / touched_jobs if touched_jobs else 0.0,
        "dup_same_ikey": sum(
            1 for toks in dup.values() if len({h.effects[t][0]["ikey"] for t in toks}) == 1
        ),
        "lost": len(h.lost),
        "renew_refused": len(h.renew_refused),
        "enqueue_errors": len(h.by["enqueue_error"]),
        "unexpected_dead": len(unexpected_dead),
        "unexpected_dead_examples": [
            f"job {j.id} ({j.task}): " + "; ".join(str(e.get("error"))[:80] for e in j.errors[-3:])
            for j in unexpected_dead[:EXAMPLES]
        ],
        "skips": len(h.by["skip"]),
        "settle_errors": len(h.by["settle_error"]),
        "fail_errors": count_errors(h.jobs.values()),
        "groups": _group_stats(h),
        "conn_samples": sum(e["samples"] for e in h.by["conns_sampled"]),
    }


def _group_stats(h: HistoryIndex) -> dict[str, dict[str, Any]]:
    """Per group of workers (plain, all): processes, pools, slots, the most handlers
    one ran at once, the most server connections one was seen holding, and the
    process faults that hit them."""
    groups: dict[str, dict[str, Any]] = {}
    for w in h.worker_shapes():
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
        for e in h.faults:
            if e.get("target") == w["name"] and e["kind"] in ("kill", "stop", "terminate"):
                g["faults"][e["kind"]] += 1
        g["pool_size"].add(w["pool_size"])
        if w["slots"] is not None:
            g["slots"].add(w["slots"])
        g["peak"] = max(g["peak"], w["peak"])
        g["conns"] = max(g["conns"], w["conns"])
    return groups
