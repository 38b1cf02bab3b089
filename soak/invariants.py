"""The soak's invariants: each a function of the history index that returns what it checked
and what violated it. `INVARIANTS` lists them in the order the report shows them.

Sources, named in each invariant's `source`: the history the processes
fsynced, the workers' logs as they recorded them, and the final database
(soak/check.py says what each holds).
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from soak.app import PERIODIC_EVERY_S, PERIODIC_SCHEDULE, PERIODIC_TASK
from soak.index import (
    CLOCK_SLACK_S,
    EXAMPLES,
    INF,
    TERMINAL,
    Claim,
    HistoryIndex,
    Job,
    StartCall,
    error_at,
    may_have_applied,
    utc,
)

# A worker whose control connection works from a slot on sends it within this
# long: its scheduler passes 50 ms after the slot, between claims, and a claim
# waits at most a second for a row lock (the control connection's lock_timeout).
SCHEDULER_PASS_S = 1.5


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


def terminal(h: HistoryIndex) -> Invariant:
    inv = Invariant(
        "every job ends in exactly one terminal state (succeeded, dead, cancelled); none queued or running",
        "database",
        len(h.jobs),
    )
    # A slot of the schedule due within a period of the stop may be enqueued by a worker's
    # scheduler after the drain's last look, as the workers are told to stop: then no
    # worker is left to run it, and it stays queued.
    stopping = min((e["t"] for e in h.by["stopping"]), default=INF)
    late = [
        j
        for j in h.jobs.values()
        if j.state == "queued"
        and j.task == PERIODIC_TASK
        and j.run_at is not None
        and j.run_at >= stopping - float(PERIODIC_EVERY_S) - CLOCK_SLACK_S
    ]
    inv.violations = [
        f"job {j.id} ({j.task}) is {j.state}"
        for j in h.jobs.values()
        if j.state not in TERMINAL and j.id not in {k.id for k in late}
    ]
    if late:
        inv.note = "; ".join(
            f"job {j.id} ({j.task}) is queued: its slot came {stopping - (j.run_at or 0.0):.2f} s"
            " before the workers were stopped, after the drain's last look"
            for j in late
        )
    return inv


def nothing_lost(h: HistoryIndex) -> Invariant:
    """Every request a producer sent has its job; every id a producer got back exists."""
    planned: set[str] = set()
    for b in h.plan.batches:
        for producer in b.producers:
            planned |= {f"{b.index}.{i}.{producer}" for i in range(len(b.payloads))}
    answered: set[str] = set()
    violations: list[str] = []
    for e in h.by["enqueue"]:
        keys = e["keys"] or [None] * len(e["rids"])
        for rid, key, job_id in zip(e["rids"], keys, e["ids"], strict=True):
            answered.add(rid)
            job = h.jobs.get(job_id)
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
    for e in h.by["enqueue_given_up"]:
        violations.append(f"batch {e['batch']}: the producer gave up sending it")
    violations += [
        f"request {rid} was never answered" for rid in sorted(planned - answered)[:EXAMPLES]
    ]
    rids_in_db = defaultdict(list)
    for j in h.jobs.values():
        if j.task != PERIODIC_TASK:
            rids_in_db[j.rid].append(j.id)
    # A periodic job comes from the schedule, not from a producer (invariant 19).
    unknown = [j for j in h.jobs.values() if j.rid not in planned and j.task != PERIODIC_TASK]
    violations += [
        f"job {j.id} carries request id {j.rid!r}, which no producer sent" for j in unknown
    ]
    doubled = [rid for rid, ids in rids_in_db.items() if len(ids) > 1]
    unanswered_jobs = [j for j in h.jobs.values() if j.rid not in answered and j.rid in planned]
    errors = len(h.by["enqueue_error"])
    note = (
        f"{len(planned)} requests, {len(h.jobs)} jobs; {errors} enqueue calls broke off "
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


def _certainly_unfinished(h: HistoryIndex) -> dict[int, tuple[float, float]]:
    """For each keyed job: an interval during which it was certainly queued or running."""
    created: dict[int, float] = {}
    for e in h.by["enqueue"]:
        keys = e["keys"] or [None] * len(e["ids"])
        for key, job_id in zip(keys, e["ids"], strict=True):
            if key is not None:
                created[job_id] = min(created.get(job_id, INF), e["t"])
    out: dict[int, tuple[float, float]] = {}
    for job in h.jobs.values():
        if job.dedupe_key is None:
            continue
        start = created.get(job.id, INF)
        claims = h.claims_of.get(job.id, [])
        if claims:
            start = min(start, claims[0].t)
        end = INF if job.state not in TERMINAL else (job.finished_at or INF)
        for c in claims:
            for e in h.completes.get(c.token, []):
                if e["answer"]:
                    end = min(end, e["sent"])
            for e in h.fails.get(c.token, []):
                if e["answer"] == "dead":
                    end = min(end, e["sent"])
        for e in h.cancels.get(job.id, []):
            if may_have_applied(e):
                end = min(end, e["sent"])
        if h.retries.get(job.id):
            # Retried: it was finished before, at the first of these at the latest
            # (finished_at is only its last finish). Every fail that may have made it
            # dead, every burial, and the retry, which found it finished.
            ends = [end, *(e["sent"] for e in h.retries[job.id])]
            for c in claims:
                ends += [e["sent"] for e in h.fails.get(c.token, [])]
                ends += [e["sent"] for e in h.sent_calls.get(c.token, []) if e["ev"] == "fail_sent"]
            ends += [
                at
                for e in job.errors
                if e.get("error") == "lease expired" and (at := error_at(e)) is not None
            ]
            end = min(ends)
        if start < end:
            out[job.id] = (start, end)
    return out


def dedupe(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    idx = h.dedupe_index
    if idx is None:
        violations.append("index taskboard.jobs_unfinished_task_dedupe_key is missing")
    else:
        unique, valid, ready, definition = idx
        if not (unique and valid and ready):
            violations.append(f"the dedupe index is not unique/valid/ready: {definition}")
        if "WHERE" not in definition or "queued" not in definition or "running" not in definition:
            violations.append(
                f"the dedupe index does not cover exactly the unfinished jobs: {definition}"
            )
    intervals = _certainly_unfinished(h)
    by_key: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for job_id in intervals:
        j = h.jobs[job_id]
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
    for e in h.by["enqueue"]:
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
    keyed = sum(1 for j in h.jobs.values() if j.dedupe_key is not None)
    return Invariant(
        "never two unfinished jobs with one queue, task and dedupe key",
        "database (unique index) + history (enqueue answers, claims, settle answers)",
        keyed + keyed_answers,
        violations,
        f"{keyed} keyed jobs from {keyed_answers} keyed enqueue answers; index: "
        + ("present, unique, valid" if idx and idx[0] and idx[1] else "NOT OK"),
    )


def final_token(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    answer_lost = answer_unrecorded = 0
    succeeded = [j for j in h.jobs.values() if j.state == "succeeded"]
    for j in succeeded:
        claims = h.claims_of.get(j.id, [])
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
        started = [c for c in claims if h.starts.get(c.token)]
        if not started or started[-1].token != j.token:
            violations.append(f"job {j.id}: the last handler start was not under its final token")
        answered = [e for e in h.completes.get(j.token, []) if e["answer"]]
        if not answered:
            if any(e["ev"].startswith("complete") for e in h.broke_off.get(j.token, [])):
                answer_lost += 1
            elif any(e["ev"].startswith("complete") for e in h.sent_calls.get(j.token, [])):
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


def single_holder(h: HistoryIndex) -> Invariant:
    """No claim while the previous token's lease, as the database last granted it, was live."""
    violations: list[str] = []
    pairs = 0
    lease = h.config.lease
    for job, claims in h.claims_of.items():
        for a, b in pairwise(claims):
            pairs += 1
            b_at = b.exp - lease  # the database's clock when it granted b
            if b_at >= a.deadline - CLOCK_SLACK_S:
                continue
            if _handed_back(h, a, before=b.t) or _cancelled_between(h, a, b):
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


def _cancelled_between(h: HistoryIndex, a: Claim, b: Claim) -> bool:
    """Was the job cancelled (then retried) between claim `a` and claim `b`?"""
    return any(
        may_have_applied(e) and a.sent <= e["t"] and e["sent"] <= b.t
        for e in h.cancels.get(a.job, [])
    )


def _fail_applied(h: HistoryIndex, c: Claim) -> bool:
    """The job's errors hold this attempt's error from this worker: its fail was applied."""
    return any(err != "lease expired" for err in h.attempt_errors(c))


def _handed_back(h: HistoryIndex, c: Claim, *, before: float) -> bool:
    """Did this token give the job back (fail or release) with a call sent before `before`?

    A fail whose answer was lost counts when the job's errors show it was applied.
    """
    answered = [e for e in h.fails.get(c.token, []) + h.releases.get(c.token, []) if e["answer"]]
    if any(e["sent"] <= before for e in answered):
        return True
    sent = [e for e in h.sent_calls.get(c.token, []) if e["ev"] == "fail_sent"]
    return any(e["sent"] <= before for e in sent) and _fail_applied(h, c)


def _settled_itself(h: HistoryIndex, c: Claim, *, before: float) -> str | None:
    """Which settle call of this token, sent before `before`, the database applied."""
    if any(e["answer"] and e["sent"] <= before for e in h.completes.get(c.token, [])):
        return "complete"
    if _handed_back(h, c, before=before):
        return "fail or release"
    return None


def refused_completes(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    reasons: dict[str, int] = defaultdict(int)
    refused = 0
    for token, events in list(h.completes.items()) + list(h.fails.items()):
        for e in events:
            if e["answer"] not in (False, None):
                continue
            call = "complete" if e["ev"] == "complete" else "fail"
            refused += 1
            reason = _why_not_holder(h, token, e)
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


def _why_not_holder(h: HistoryIndex, token: str, e: dict[str, Any]) -> str | None:
    c = h.claims.get(token)
    job = h.jobs.get(e["job"])
    if c is None or job is None:
        return None
    if (
        e["ev"] == "fail"
        and h.broke_off.get(token)
        and any(err != "lease expired" for err in h.attempt_errors(c))
    ):
        return "already applied by an earlier send whose answer was lost"
    claims = h.claims_of[c.job]
    if claims.index(c) < len(claims) - 1:
        return "superseded by a later claim"
    if any(r["answer"] for r in h.releases.get(token, [])):
        return "released"
    if any(may_have_applied(x) and x["sent"] <= e["t"] for x in h.cancels.get(c.job, [])):
        return "cancelled"
    if job.state == "dead" and any(
        err.get("error") == "lease expired" and err.get("attempt") == c.attempt
        for err in job.errors
    ):
        return "buried (lease expired, no attempts left)"
    if job.attempt > c.attempt:
        return "superseded by a claim not in the history (its worker died before recording it)"
    return None


def worker_reports(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    checked = 0
    per_proc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    refusals: dict[tuple[str, int, int], int] = defaultdict(int)
    for c in h.claims.values():
        per_proc[c.proc]["claimed"] += 1
    for events in h.completes.values():
        for e in events:
            p = per_proc[e["proc"]]
            if e["answer"]:
                job = h.jobs.get(e["job"])
                committed = job is not None and job.state == "succeeded" and job.token == e["token"]
                # A transactional success counts once its COMMIT is known to
                # have happened; a worker that could not learn it gave the job up.
                if not e["txn"] or (committed and e["token"] not in h.lost):
                    p["succeeded"] += 1
            else:
                p["stale"] += 1
                refused = h.claims.get(e["token"])
                if refused is not None:
                    refusals[(e["proc"], refused.job, refused.attempt)] += 1
    for events in h.fails.values():
        for e in events:
            if e["answer"] is None:
                per_proc[e["proc"]]["stale"] += 1
                failed = h.claims.get(e["token"])
                if failed is not None:
                    refusals[(e["proc"], failed.job, failed.attempt)] += 1
    for e in h.by["refused_log"]:
        checked += 1
        key = (e["proc"], e["job"], e["attempt"])
        if refusals.get(key, 0) <= 0:
            violations.append(
                f"{e['proc']} logged a refused {e['call']} of job {e['job']} (attempt {e['attempt']}) "
                "that no answer in its history refused"
            )
        else:
            refusals[key] -= 1
    for e in h.by["counters"]:
        checked += 1
        mine = per_proc[e["proc"]]
        for name in ("claimed", "succeeded", "stale"):
            if e.get(name) != mine[name]:
                violations.append(
                    f"{e['proc']} reported {name}={e.get(name)} at exit; its history of answers says {mine[name]}"
                )
    # A token the database refused is never also a success of the same worker.
    for token, events in h.completes.items():
        answers = {(e["proc"], bool(e["answer"])) for e in events}
        procs_true = {p for p, ok in answers if ok}
        procs_false = {p for p, ok in answers if not ok}
        if procs_true & procs_false:
            violations.append(f"token {token}: complete answered both true and false to one worker")
    graceful = len(h.by["counters"])
    return Invariant(
        "no worker reported success for a job whose complete returned false; its counters match the answers it got",
        "worker log (refusal warnings, exit counters) + history (answers)",
        checked,
        violations,
        f"{graceful} workers exited gracefully and printed counters",
    )


def dead_attempts(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    dead = [j for j in h.jobs.values() if j.state == "dead"]
    for j in dead:
        if j.attempt < j.max_attempts:
            violations.append(f"job {j.id} is dead at attempt {j.attempt} of {j.max_attempts}")
    lives = 0
    for job_id, claims in h.claims_of.items():
        job = h.jobs.get(job_id)
        if job is None:
            continue
        for life in _lives(h, job_id, claims):
            lives += 1
            released = sum(1 for c in life if any(r["answer"] for r in h.releases.get(c.token, [])))
            if len(life) - released > job.max_attempts:
                violations.append(
                    f"job {job_id} was claimed {len(life)} times ({released} released) "
                    f"with max_attempts {job.max_attempts}"
                    + (" since its last retry" if len(life) < len(claims) else "")
                )
    retried = sum(1 for r in h.retries.values() if r)
    return Invariant(
        "a job is dead only with its attempts used up, and never claimed more often than its attempts (a retry resets them)",
        "database (dead jobs) + history (claims, releases, retries)",
        len(dead) + lives,
        violations,
        f"{retried} jobs retried, their attempts counted from each retry on",
    )


def _lives(h: HistoryIndex, job_id: int, claims: list[Claim]) -> list[list[Claim]]:
    """The job's claims split at each retry that queued it again (the retry's database
    time: every claim before it came before the job finished, every one after it saw
    run_at = the retry's clock)."""
    cuts = sorted(e["sent_db"] for e in h.retries.get(job_id, []) if e.get("sent_db") is not None)
    lives: list[list[Claim]] = [[] for _ in range(len(cuts) + 1)]
    for c in claims:
        lives[bisect.bisect_right(cuts, c.exp - h.config.lease)].append(c)
    return [life for life in lives if life]


def same_token_effects(h: HistoryIndex) -> Invariant:
    violations = [
        f"job {ev[0]['job']}: {len(ev)} external effects under token {token}"
        for token, ev in h.effects.items()
        if len(ev) > 1
    ]
    return Invariant(
        "zero duplicate external effects under the same token",
        "history (handler effects)",
        sum(len(v) for v in h.effects.values()),
        violations,
    )


def cross_token_effects(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    dup_jobs = {job: toks for job, toks in h.effect_jobs().items() if len(toks) > 1}
    for job, toks in dup_jobs.items():
        touched = h.job_touched(job)
        if not touched:
            violations.append(
                f"job {job}: effects under {len(toks)} tokens, but no injected fault touched it"
                + _lost_note(h, job)
            )
    by_cause: dict[str, int] = defaultdict(int)
    for job in dup_jobs:
        for kind in h.job_touched(job) or {"none"}:
            by_cause[kind] += 1
    note = f"{len(dup_jobs)} jobs with effects under 2+ tokens; causes: " + (
        ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items())) or "none"
    )
    return Invariant(
        "duplicate external effects under different tokens only on jobs a fault touched",
        "history (effects, claims, the runner's faults)",
        len(h.effect_jobs()),
        violations,
        note,
    )


def _lost_note(h: HistoryIndex, job: int) -> str:
    whys = [h.lost[c.token]["why"] for c in h.claims_of.get(job, []) if c.token in h.lost]
    return f" (lost: {whys[0]})" if whys else ""


def effect_of_success(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    succeeded = [j for j in h.jobs.values() if j.state == "succeeded"]
    for j in succeeded:
        if j.token is None or not h.effects.get(j.token):
            violations.append(
                f"job {j.id} ({j.task}) succeeded without an effect under its final token"
            )
    return Invariant(
        "every succeeded job's effect happened under its final token (no success without the work)",
        "database (final token) + history (effects)",
        len(succeeded),
        violations,
    )


def fenced_ledger(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    rows_of: dict[int, list[str]] = defaultdict(list)
    for job_id, token, _ in h.ledger:
        rows_of[job_id].append(token)
    for job_id, tokens in rows_of.items():
        j = h.jobs.get(job_id)
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
    ledger_jobs = [j for j in h.jobs.values() if j.task == "ledger.post"]
    for j in ledger_jobs:
        if j.state == "succeeded" and len(rows_of.get(j.id, [])) != 1:
            violations.append(f"job {j.id} succeeded with {len(rows_of.get(j.id, []))} ledger rows")
    stale_writes = sum(
        1
        for c in h.claims.values()
        if c.task == "ledger.post"
        and h.jobs.get(c.job)
        and h.jobs[c.job].token != c.token
        and h.starts.get(c.token)
    )
    return Invariant(
        "fenced database effects: one ledger row per succeeded ledger job, under its final token; stale writes rolled back",
        "database (soak_app.ledger, final tokens) + history (claims)",
        len(ledger_jobs),
        violations,
        f"{len(h.ledger)} rows committed; {stale_writes} ledger handler runs under a token that did not complete the job left none",
    )


def idempotency_keys(h: HistoryIndex) -> Invariant:
    violations: list[str] = []
    for job, claims in h.claims_of.items():
        keys = {c.ikey for c in claims} | {
            s["ikey"] for c in claims for s in h.starts.get(c.token, [])
        }
        if len(keys) > 1:
            violations.append(
                f"job {job}: {len(keys)} different idempotency keys across its attempts"
            )
    return Invariant(
        "the idempotency key is the same for every attempt of a job",
        "history (claims, handler starts)",
        len(h.claims_of),
        violations,
    )


def leases_kept(h: HistoryIndex) -> Invariant:
    """Renewal kept every lease alive unless a fault intervened."""
    violations: list[str] = []
    checked = 0
    benign = 0
    for token, e in h.lost.items():
        checked += 1
        c = h.claims[token]
        if c.touched_by:
            continue
        settled = _settled_itself(h, c, before=e["t"])
        if settled is not None:
            benign += 1
            h.finding_once(
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
    long_claims = sum(1 for c in h.claims.values() if c.task == "batch.long")
    return Invariant(
        "no lease lost without an injected fault (long handlers and pool-holding handlers renewed)",
        "worker log (lost warnings) + history (claims, faults)",
        len(h.claims),
        violations,
        f"{checked} losses, all but {len(violations)} under faults; {benign} right after the "
        f"worker's own settling call (a race, see findings); {long_claims} claims of handlers "
        "running past the lease",
    )


def no_crash(h: HistoryIndex) -> Invariant:
    # A worker started while the server restarts waits for it: dying then is a crash too.
    violations = []
    for name, e in h.exits.items():
        if e["cause"] != "unexpected":
            continue
        errors = [w["error"] for w in h.by["worker_error"] if w["proc"] == name]
        violations.append(
            f"{name} exited by itself (status {e['code']})" + (f": {errors[0]}" if errors else "")
        )
    return Invariant(
        "no worker or producer died by itself, also when started during a server restart",
        "history (the runner's process records)",
        len(h.spawned),
        violations,
    )


def fences(h: HistoryIndex) -> Invariant:
    """Per job, in the order of claim, the fences handed out strictly increase."""
    violations: list[str] = []
    pairs = 0
    for job, claims in h.claims_of.items():
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
        final = h.jobs[job].fence if job in h.jobs else None
        top = max(c.fence for c in claims if c.fence is not None)
        if final is not None and (final < top or final < len(claims)):
            violations.append(
                f"job {job}: its final fence {final} is below the {top} handed out "
                f"or the {len(claims)} claims recorded"
            )
    reclaimed = sum(1 for claims in h.claims_of.values() if len(claims) > 1)
    return Invariant(
        "fences strictly increasing per job: in the order of claim, every fence handed out is above the one before (none repeats)",
        "history (claim answers: fence, claim time on the server clock) + database (final fence)",
        pairs,
        violations,
        f"{pairs} pairs of successive claims of {reclaimed} jobs claimed more than once",
    )


def _claim_span(h: HistoryIndex, c: Claim, *, last_t: float | None = None) -> tuple[float, float]:
    """The database's clock from the start of the claim call that handed out `c` (its
    v_now, lease_expires_at - lease) to the latest it could have ended: v_now plus
    the call's whole time from send to recorded answer (on the worker's clock)."""
    start = c.exp - h.config.lease
    t = c.t if last_t is None else last_t
    return start, (start + (t - c.sent)) if c.sent is not None else INF


def nothing_from_paused(h: HistoryIndex) -> Invariant:
    """No claim made, from start to end, while its queue was certainly paused."""
    settings = h.queue_settings("paused")
    violations: list[str] = []
    checked = edge = 0
    for c in h.claims.values():
        job = h.jobs.get(c.job)
        if job is None or job.queue not in settings:
            continue
        checked += 1
        start, end = _claim_span(h, c)
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


def _is_start(h: HistoryIndex, y: Claim) -> bool:
    """Did claim `y` certainly start a queued job (rather than reclaim an expired one)?"""
    if y.fence is None:
        return False
    if y.fence == 1:
        return True
    p = h.by_fence.get((y.job, y.fence - 1))
    if p is None:
        return False  # the claim before it is not in the history: unknown
    # p's fail or release was applied, so it came before y: y took a queued job.
    if any(e["answer"] is not None for e in h.fails.get(p.token, [])):
        return True
    if any(e["answer"] for e in h.releases.get(p.token, [])):
        return True
    lease = h.config.lease
    return any(
        p.exp - lease < e["sent_db"] < y.exp - lease
        for e in h.retries.get(y.job, [])
        if e.get("sent_db") is not None
    )


def _may_have_left(h: HistoryIndex, x: Claim, until: float, db_until: float) -> bool:
    """Could the job of claim `x` have stopped running after `x` was made and before
    `until` (wall clock; `db_until` on the database's): a complete, fail or release
    sent by x's token or a later one, a cancel, or a burial by claim."""
    for sent, claim_exp in h.leave_sends.get(x.job, []):
        if claim_exp >= x.exp and sent <= until:
            return True
    for e in h.cancels.get(x.job, []):
        if may_have_applied(e) and e["sent"] <= until and e["t"] >= x.sent:
            return True
    job = h.jobs[x.job]
    claimed_at = x.exp - h.config.lease
    for err in job.errors:
        at = error_at(err)
        if err.get("error") == "lease expired" and at is not None and claimed_at <= at <= db_until:
            return True
    return False


def queue_limits(h: HistoryIndex) -> Invariant:
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
    settings = h.queue_settings("limit")
    lease = h.config.lease
    rows_of: dict[tuple[str, float, float], list[Claim]] = defaultdict(list)
    index: dict[str, dict[int, list[Claim]]] = {q: defaultdict(list) for q in settings}
    for c in h.claims.values():
        job = h.jobs.get(c.job)
        if job is None or job.queue not in settings or c.sent is None:
            continue
        rows_of[(c.proc, c.sent, c.exp)].append(c)
        for second in range(int(c.exp - lease), int(c.deadline) + 1):
            index[job.queue][second].append(c)
    calls: dict[str, list[StartCall]] = defaultdict(list)
    unlimited = 0
    for (proc, sent, _), rows in rows_of.items():
        starts = [y for y in rows if _is_start(h, y)]
        if not starts:
            continue
        queue = h.jobs[rows[0].job].queue
        last_t = max(y.t for y in rows)
        start, end = _claim_span(h, rows[0], last_t=last_t)
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
                total, limit, running, starts = _running_after(h, together, index[queue])
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


def _held_from(h: HistoryIndex, c: Claim) -> float:
    """The latest the claim call that handed out `c` could have committed, on the
    database's clock: its v_now (read before it waited for the queue's row) plus the
    call's whole time from send to recorded answer."""
    return INF if c.sent is None else c.exp - h.config.lease + max(0.0, c.t - c.sent)


def _held_until(h: HistoryIndex, c: Claim) -> float:
    """The earliest the lease of `c` could have ended, on the database's clock: its
    deadline as the database last granted it (claim, accepted renewals), or sooner the
    moment a settling call of its token was applied, each read at or before its commit:
    a complete's finished_at (the job succeeded with this token), a fail's time in the
    job's errors (this attempt, this worker, since the claim), and for a release that may
    have been applied the last renewal (deadline - lease). A cancel does not end it: the
    cancelled job keeps its place until that deadline (held_until)."""
    lease = h.config.lease
    end = c.deadline
    job = h.jobs.get(c.job)
    if job is None:
        return end
    if job.state == "succeeded" and job.token == c.token and job.finished_at is not None:
        end = min(end, job.finished_at)
    claimed_at = c.exp - lease - CLOCK_SLACK_S
    for err in job.errors:
        at = error_at(err)
        if (
            at is not None
            and at >= claimed_at
            and err.get("attempt") == c.attempt
            and err.get("worker") == c.proc
        ):
            end = min(end, at)
    released = bool(h.releases.get(c.token)) or any(
        e["ev"].startswith("release")
        for e in h.sent_calls.get(c.token, []) + h.broke_off.get(c.token, [])
    )
    if released:
        end = min(end, c.deadline - lease)
    return end


def key_limits(h: HistoryIndex) -> Invariant:
    """Never beyond a key's limit among live leases.

    A claim's lease is certainly held from the latest its claim call could have
    committed to the earliest it could have ended (_held_from, _held_until), both on
    the database's clock. For each concurrency key of the queue with a key limit, at
    no instant do more of those spans overlap than the limit. Spans that the history
    cannot prove (a claim whose answer was never recorded, a renewal whose answer was
    lost) are shorter or missing: the check can miss an excess, it never reports one
    that did not happen.
    """
    settings = [e for e in h.ops if e["kind"] == "key_limit" and e.get("confirmed_db") is not None]
    name = (
        "never beyond a key's limit among live leases: at no instant did more than the key "
        "limit of one key's jobs hold a live lease"
    )
    source = (
        "history (the runner's key_limit call; claims and renewals: lease start and "
        "deadline on the server clock; release calls) + database (keys, finished_at, fail times)"
    )
    if not settings:
        return Invariant(name, source, 0, [], "no key limit was set in this run")
    setting = settings[-1]
    queue, limit, set_at = setting["queue"], int(setting["limit"]), setting["confirmed_db"]
    lease = h.config.lease
    spans: dict[str, list[tuple[float, float, Claim]]] = defaultdict(list)
    judged = 0
    hit: dict[str, int] = defaultdict(int)
    for c in h.claims.values():
        job = h.jobs.get(c.job)
        if job is None or job.queue != queue or job.concurrency_key is None:
            continue
        if c.exp - lease < set_at:
            continue
        judged += 1
        for kind in c.touched_by:
            hit[kind] += 1
        begin, end = _held_from(h, c) + CLOCK_SLACK_S, _held_until(h, c) - CLOCK_SLACK_S
        if begin < end:
            spans[job.concurrency_key].append((begin, end, c))
    violations: list[str] = []
    at_limit_s = 0.0
    peaks: dict[str, int] = {}
    for key, key_spans in sorted(spans.items()):
        edges = sorted(
            [(b, 1, i) for i, (b, _, _) in enumerate(key_spans)]
            + [(e, -1, i) for i, (_, e, _) in enumerate(key_spans)],
            key=lambda edge: (edge[0], edge[1]),  # an end before a begin at one instant
        )
        live: set[int] = set()
        peak = 0
        since = 0.0
        for at, step, i in edges:
            if len(live) == limit:
                at_limit_s += at - since
            if step > 0:
                live.add(i)
                if len(live) == limit + 1:
                    holders = sorted((key_spans[j][2] for j in live), key=lambda x: x.exp)
                    violations.append(
                        f"{queue}, key {key}: at {utc(at)} {len(live)} jobs held a live lease "
                        f"(limit {limit}): "
                        + ", ".join(
                            f"job {x.job} ({x.proc}, attempt {x.attempt})" for x in holders[:4]
                        )
                    )
            else:
                live.discard(i)
            peak = max(peak, len(live))
            since = at
        peaks[key] = peak
    certain = sum(len(v) for v in spans.values())
    return Invariant(
        name,
        source,
        judged,
        violations,
        f"{queue}: key limit {limit}; {judged} claims of keyed jobs, {certain} with a lease the "
        f"history proves held; most held at once per key: "
        + (", ".join(f"{k} {p}" for k, p in sorted(peaks.items())) or "none")
        + f"; {at_limit_s:.1f} s in all with a key at its limit; keyed claims a fault hit: "
        + (", ".join(f"{k} {n}" for k, n in sorted(hit.items())) or "none"),
    )


@dataclass
class Start:
    """One start of a job (a claim: the first or a reclaim), on the database's clock."""

    at: float  # the claim's v_now (its started_at, lease_expires_at - lease)
    job: int
    fence: int  # the fence the claim handed out: which start of the job it was
    source: str  # claim (a worker recorded it), reclaim (job_events), final (started_at)
    touched_by: frozenset[str] = frozenset()
    confirmed: bool = False  # a second source placed it at the same time


def _starts_of(h: HistoryIndex, job: Job) -> tuple[list[Start], int, list[str]]:
    """Every start of `job` that the history or the database places on the database's
    clock, one per fence: a claim the history recorded (lease_expires_at - lease), a
    reclaim job_events recorded (its `at`, the fence above the lease it took over), the
    final started_at (the final fence). Also how many of its fences (1 to the final
    one) none of them places, and where two sources place one fence apart."""
    lease = h.config.lease
    placed: dict[int, Start] = {}
    disagree: list[str] = []

    def place(start: Start) -> None:
        known = placed.get(start.fence)
        if known is None:
            placed[start.fence] = start
        elif abs(known.at - start.at) <= CLOCK_SLACK_S:
            known.confirmed = True
        else:
            disagree.append(
                f"job {job.id} fence {start.fence}: {known.source} at {utc(known.at)}, "
                f"{start.source} at {utc(start.at)}"
            )

    for c in h.claims_of.get(job.id, []):
        if c.fence is not None:
            place(Start(c.exp - lease, job.id, c.fence, "claim", frozenset(c.touched_by)))
    for fence, at in h.reclaims.get(job.id, []):
        place(Start(at, job.id, fence, "reclaim"))
    if job.fence and job.started_at is not None:
        place(Start(job.started_at, job.id, job.fence, "final"))
    unplaced = sum(1 for f in range(1, (job.fence or 0) + 1) if f not in placed)
    return sorted(placed.values(), key=lambda x: x.at), unplaced, disagree


def _window_counts(times: list[float], per: float) -> list[int]:
    """For each start (sorted times), how many starts lie in the window of `per` that ends
    at it: after its time - per, up to it (starts at one instant all counted). A start
    CLOCK_SLACK_S or less inside the window's open edge is left out: the check can miss
    an excess that close to the edge, it never reports one that did not happen."""
    return [
        bisect.bisect_right(times, t) - bisect.bisect_right(times, t - per + CLOCK_SLACK_S)
        for t in times
    ]


def rate_limits(h: HistoryIndex) -> Invariant:
    """Never more starts per window than a rate limit allows.

    For each rate limit the runner set (queue, starts, per, by_key), every start of a
    job of that queue (each claim: first claims and reclaims, one per fence) placed on
    the database's clock (_starts_of): no window of `per` holds more than `starts` of
    them, of the queue, or with by_key of any one concurrency key (jobs without a key
    are not limited then). A claim reads its clock after its turn on the queue's row,
    so these times are the ones claim counted with. A start that neither the history
    nor the database places (a claim whose answer was never recorded, then reclaimed
    or claimed again after a release or retry) is left out: the check can miss an
    excess, it never reports one that did not happen.
    """
    name = (
        "never more starts per window than a rate limit: no window of `per` held more than "
        "`starts` starts (claims, reclaims included) of the queue, or of one key with by_key"
    )
    source = (
        "runner history (the rate_limit calls) + history (claims: lease start on the server "
        "clock, fence) + database (job_events reclaims, started_at, final fences, keys)"
    )
    settings = [e for e in h.ops if e["kind"] == "rate_limit" and e.get("confirmed_db") is not None]
    if not settings:
        return Invariant(name, source, 0, [], "no rate limit was set in this run")
    last: dict[str, dict[str, Any]] = {}
    for e in settings:
        last[e["queue"]] = e
    violations: list[str] = []
    notes: list[str] = []
    checked = 0
    for queue, setting in sorted(last.items()):
        limit, per, by_key = int(setting["starts"]), float(setting["per"]), bool(setting["by_key"])
        set_at = setting["confirmed_db"]
        groups: dict[str | None, list[Start]] = defaultdict(list)
        unplaced = unlimited = 0
        sources: dict[str, int] = defaultdict(int)
        confirmed = 0
        hit: dict[str, int] = defaultdict(int)
        for job in h.jobs.values():
            if job.queue != queue:
                continue
            starts, missing, disagree = _starts_of(h, job)
            violations += [f"{queue}: two sources disagree on a start: {d}" for d in disagree]
            unplaced += missing
            if by_key and job.concurrency_key is None:
                unlimited += len(starts)
                continue
            for x in starts:
                if x.at < set_at:
                    continue  # before the limit: claim does not count it
                groups[job.concurrency_key if by_key else None].append(x)
                sources[x.source] += 1
                confirmed += x.confirmed
                for kind in x.touched_by:
                    hit[kind] += 1
        peaks: dict[str | None, int] = {}
        full = 0
        for group, unsorted in sorted(groups.items(), key=lambda kv: str(kv[0])):
            starts = sorted(unsorted, key=lambda x: x.at)
            times = [x.at for x in starts]
            counts = _window_counts(times, per)
            checked += len(starts)
            peaks[group] = max(counts, default=0)
            # Each instant's window judged once, at its last start.
            ends = [i for i in range(len(times)) if i + 1 == len(times) or times[i + 1] > times[i]]
            full += sum(1 for i in ends if counts[i] == limit)
            where = f"{queue}, key {group}" if by_key else queue
            for i in ends:
                n = counts[i]
                if n <= limit:
                    continue
                inside = [x for x in starts if times[i] - per + CLOCK_SLACK_S < x.at <= times[i]]
                violations.append(
                    f"{where}: {n} starts in the {per:g} s ending {utc(times[i])} "
                    f"(limit {limit}): "
                    + ", ".join(
                        f"job {x.job} fence {x.fence} ({x.source}) at {utc(x.at)}"
                        for x in inside[:4]
                    )
                    + (" ..." if len(inside) > 4 else "")
                )
        reclaims = sum(1 for x in (y for g in groups.values() for y in g) if x.fence > 1)
        peak = (
            ", ".join(f"{k} {p}" for k, p in sorted(peaks.items(), key=lambda kv: str(kv[0])))
            if by_key
            else str(peaks.get(None, 0))
        )
        notes.append(
            f"{queue}: {limit} per {per:g} s{' per key' if by_key else ''}; "
            f"{sum(sources.values())} starts placed ("
            + ", ".join(f"{n} {s}" for s, n in sorted(sources.items()))
            + f"; {confirmed} of them placed alike by the database), {reclaims} of them after "
            f"a first, {unplaced} unplaced"
            + (f", {unlimited} without a key" if by_key else "")
            + f"; most in one window: {peak or 'none'}; {full} windows at the limit; "
            "starts a fault hit: "
            + (", ".join(f"{k} {n}" for k, n in sorted(hit.items())) or "none")
        )
    return Invariant(name, source, checked, violations, "; ".join(notes))


def _running_after(
    h: HistoryIndex, together: list[StartCall], index: dict[int, list[Claim]]
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
    running = [x for x in latest.values() if not _may_have_left(h, x, until, db_until)]
    starts = [y for c in together for y in c.starts]
    if len(together) > 1:
        starts = [y for y in starts if not _may_have_left(h, y, until, db_until)]
    return len(running) + len(starts), limit, running, starts


def _able(h: HistoryIndex) -> dict[str, list[tuple[float, float]]]:
    """When each worker certainly could run its scheduler (the wall clock): from its
    loop's start to its exit or the stop of every worker, minus its SIGSTOPs, the
    server's restarts (until its control connection was back) and every other
    stretch its control connection spent failing."""
    stopping = min((e["t"] for e in h.by["stopping"]), default=INF)
    started = {e["proc"]: e["t"] for e in h.by["worker_started"]}
    gaps: dict[str, list[tuple[float, float]]] = defaultdict(list)
    stop_begin: dict[str, float] = {}
    for e in h.faults:
        if e["kind"] == "stop":
            stop_begin[e["target"]] = e.get("at", e["t"])
        elif e["kind"] == "cont":
            gaps[e["target"]].append((stop_begin.pop(e["target"], e["t"]), e["t"]))
    for target, begin in stop_begin.items():
        gaps[target].append((begin, INF))
    ups: dict[str, list[float]] = defaultdict(list)
    for e in h.by["control_up"]:
        ups[e["proc"]].append(e["t"])
    breaks = sorted(
        [e["t"] for e in h.by["fault_begin"]]
        + [e.get("at", e["t"]) for e in h.faults if e["kind"] == "terminate"]
    )
    for e in h.by["control_down"]:
        # Down from the fault that broke it (a restart, a terminate) or its report.
        before = [t for t in breaks if t <= e["t"]]
        begin = min(before[-1] if before else e["t"], e["t"])
        up = min((t for t in ups[e["proc"]] if t >= e["t"]), default=INF)
        gaps[e["proc"]].append((begin, up))
    for _, begin, end in h.restart_windows:
        for proc in started:
            up = min((t for t in ups[proc] if t >= begin), default=end)
            gaps[proc].append((begin, max(end, up)))
    able: dict[str, list[tuple[float, float]]] = {}
    for proc, t0 in started.items():
        exit_event = h.exits.get(proc)
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


def periodic_slots(h: HistoryIndex) -> Invariant:
    """Every slot of the soak's schedule from its first job to its last has exactly one
    job, but for slots no worker could have sent: none had a working control connection
    for SCHEDULER_PASS_S from the slot on (all down, stopped or cut off)."""
    period = float(PERIODIC_EVERY_S)
    jobs = sorted(
        (j for j in h.jobs.values() if j.task == PERIODIC_TASK and j.run_at is not None),
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
            violations.append(f"slot {utc(slot)} has {len(ids)} jobs: {ids}")
    enqueued: dict[str, list[str]] = defaultdict(list)
    for e in h.by["periodic"]:
        enqueued[e["slot"]].append(f"{e['proc']} job {e['job']}")
    for slot_text, who in enqueued.items():
        if len(who) > 1:
            violations.append(f"slot {slot_text} enqueued more than once: {', '.join(who)}")
    missing = excused = 0
    expected = 0
    if jobs:
        able = _able(h)
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
                        a <= slot - CLOCK_SLACK_S and slot + SCHEDULER_PASS_S <= b for a, b in spans
                    )
                ]
                if up:
                    missing += 1
                    violations.append(
                        f"slot {utc(slot)} has no job although {', '.join(sorted(up)[:3])} "
                        f"could run the scheduler for {SCHEDULER_PASS_S:g} s from it"
                    )
                else:
                    excused += 1
            slot += period
        row = h.schedules.get(PERIODIC_SCHEDULE)
        if row is None:
            violations.append(f"taskboard.schedules has no row for {PERIODIC_SCHEDULE}")
        elif abs(row[0] - last) > CLOCK_SLACK_S or row[1] != by_slot[last][-1]:
            violations.append(
                f"taskboard.schedules says {PERIODIC_SCHEDULE}'s last slot is {utc(row[0])} "
                f"(job {row[1]}); its last job is {by_slot[last][-1]} for {utc(last)}"
            )
        stopping = min((e["t"] for e in h.by["stopping"]), default=INF)
        if stopping < INF and last < stopping - 2 * period - 1.0:
            violations.append(
                f"the last slot with a job, {utc(last)}, is {stopping - last:.1f} s before "
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


def concurrency(h: HistoryIndex) -> Invariant:
    """Handlers never beyond a worker's slots; a worker with a transactional task has
    no more slots than handler connections; server connections never beyond the pool;
    and a plain-only worker ran more handlers at once than its handler connections."""
    violations: list[str] = []
    shapes = h.worker_shapes()
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
    sampled = h.by["conns_sampled"]
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


# -- dependencies ----------------------------------------------------------------------

DEPENDENCY_ERROR = re.compile(r"^dependency (\d+) ended (dead|cancelled)$")


def _retried_jobs(h: HistoryIndex) -> set[int]:
    """Jobs a retry may have queued again (answered true, or its answer lost)."""
    return {e["job"] for e in h.ops if e["kind"] == "retry" and may_have_applied(e)}


def _first_start(h: HistoryIndex, job: Job) -> Start | None:
    """The earliest start of `job` the history or the database places (_starts_of)."""
    starts = _starts_of(h, job)[0]
    return starts[0] if starts else None


def _ended(h: HistoryIndex, job_id: int) -> Job | None:
    """The job, when it ended (succeeded, dead or cancelled, with its finished_at)."""
    job = h.jobs.get(job_id)
    if job is None or job.state not in TERMINAL or job.finished_at is None:
        return None
    return job


def dependencies_first(h: HistoryIndex) -> Invariant:
    """No dependent started before its dependencies succeeded.

    For each job a producer's graph enqueued with dependencies (the history keeps
    them: the database removes each edge when its dependency ends), every start placed
    on the database's clock (_starts_of: its earliest) comes after the end of each
    dependency: its finished_at, which the accepted completion (or the fail, burial or
    cancel that ended it) reads before it settles the dependents in its transaction;
    the dependent is runnable from the settle's clock on, and a claim takes no job
    whose run_at is later than its own clock. A dependency that was retried ended
    first dead or cancelled at a time the final database no longer holds: its edge is
    not timed. With on_dependency_failure 'cancel', a dependent one of whose
    dependencies ended dead or cancelled (or was retried: it ended so first) never
    started and ended cancelled, its errors naming the first such dependency and how
    it ended, unless it was itself retried since (a retry queues it again, waiting
    only for the dependencies that had not ended).
    """
    retried = _retried_jobs(h)
    violations: list[str] = []
    edges = untimed = started = cancelled = ran_anyway = 0
    closest = INF
    ends: dict[str, int] = defaultdict(int)
    for child, deps in sorted(h.depends_on.items()):
        job = h.jobs.get(child)
        if job is None:
            continue  # invariant 2 says what became of the request
        mode = h.dependency_mode.get(child, "cancel")
        if job.on_dependency_failure is not None and job.on_dependency_failure != mode:
            violations.append(
                f"job {child}: enqueued with on_dependency_failure {mode}, the database "
                f"says {job.on_dependency_failure}"
            )
        first = _first_start(h, job)
        started += first is not None
        failed: list[tuple[int, str | None, float]] = []
        for d in deps:
            if d in retried:
                untimed += 1
                failed.append((d, None, INF))
                continue
            dep = _ended(h, d)
            if dep is None:
                state = h.jobs[d].state if d in h.jobs else "missing"
                if first is not None:
                    violations.append(
                        f"job {child} started at {utc(first.at)} ({first.source}, fence "
                        f"{first.fence}) while its dependency {d} is {state}"
                    )
                continue
            assert dep.finished_at is not None
            edges += 1
            ends[dep.state] += 1
            if dep.state != "succeeded":
                failed.append((d, dep.state, dep.finished_at))
            if first is None:
                continue
            closest = min(closest, first.at - dep.finished_at)
            if first.at < dep.finished_at - CLOCK_SLACK_S:
                how = (
                    "its accepted completion"
                    if dep.state == "succeeded"
                    else f"it ended {dep.state}"
                )
                violations.append(
                    f"job {child} ({mode}) started at {utc(first.at)} ({first.source}, fence "
                    f"{first.fence}), {dep.finished_at - first.at:.3f} s before its dependency "
                    f"{d} ({dep.task}): {how} at {utc(dep.finished_at)}"
                )
        if not failed:
            continue
        if mode == "run":
            ran_anyway += first is not None
            continue
        if child in retried:
            continue  # queued again by hand: it waits only for what had not ended
        d, bad, _ = min(failed, key=lambda f: (f[2], f[0]))
        if first is not None:
            violations.append(
                f"job {child} started at {utc(first.at)} although its dependency {d} ended "
                f"{bad or 'dead or cancelled'} (on_dependency_failure cancel)"
            )
        if job.state != "cancelled":
            violations.append(
                f"job {child} is {job.state}, though its dependency {d} ended "
                f"{bad or 'dead or cancelled'} (on_dependency_failure cancel)"
            )
            continue
        named = [
            (int(m.group(1)), m.group(2))
            for e in job.errors
            if (m := DEPENDENCY_ERROR.match(str(e.get("error", ""))))
        ]
        # The first dependency to end dead or cancelled cancels it, and its errors say
        # which and how; one that was retried ended so at a time not known here.
        if not named:
            violations.append(
                f"job {child} was cancelled, but its errors name no dependency (its dependency "
                f"{d} ended {bad or 'dead or cancelled'})"
            )
            continue
        x, how = named[0]
        timed = {f[0]: f for f in failed}
        earliest = min(at for _, _, at in failed)
        wrong = x not in timed or (
            timed[x][1] is not None
            and (timed[x][1] != how or timed[x][2] > earliest + CLOCK_SLACK_S)
        )
        if wrong:
            violations.append(
                f"job {child} was cancelled for 'dependency {x} ended {how}'; its first "
                f"dependency to end so was {d} ({bad or 'dead or cancelled'})"
            )
        else:
            cancelled += 1
    dependents = len(h.depends_on)
    hit = sum(1 for d in h.dependents if h.job_touched(d))
    return Invariant(
        "no dependent started before its dependencies succeeded: every start of a job with "
        "dependencies comes after each one's accepted completion (with 'run', after each "
        "ended); one whose dependency ended dead or cancelled with 'cancel' never started "
        "and was cancelled naming it",
        "history (the producers' graphs; claims: lease start on the server clock) + database "
        "(finished_at, states, errors, reclaims, started_at)",
        edges,
        violations,
        f"{dependents} dependents of {len(h.dependents)} dependencies ({hit} of them hit by "
        f"a fault), {started} of the dependents started; {edges} edges timed (their "
        "dependency ended "
        + (", ".join(f"{k} {n}" for k, n in sorted(ends.items())) or "never")
        + f"), {untimed} untimed (the dependency was retried); {cancelled} dependents "
        f"cancelled naming their failed dependency, {ran_anyway} run after a failed one "
        "(on_dependency_failure run); closest start after a dependency's end: "
        + (f"{closest * 1000:.1f} ms" if closest < INF else "none"),
    )


def _released_at(h: HistoryIndex, job: Job) -> float | None:
    """When settle made `job` runnable (its run_at then, the database's clock), while its
    run_at still says so: no fail put it off, no release by a holder, no retry."""
    if job.run_at is None:
        return None
    if any(e.get("worker") and e.get("error") != "lease expired" for e in job.errors):
        return None
    for c in h.claims_of.get(job.id, []):
        if h.releases.get(c.token) or any(
            e["ev"].startswith("release")
            for e in h.sent_calls.get(c.token, []) + h.broke_off.get(c.token, [])
        ):
            return None
    return job.run_at


def released_by_accepted(h: HistoryIndex) -> Invariant:
    """No dependent released by a refused completion.

    A dependent becomes runnable only in the transaction that ends its last
    dependency: settle sets its run_at to that transaction's clock (or its own later
    run_at), so while nothing else moved it, run_at is never before the end of any of
    its dependencies (their finished_at: the accepted completion's clock). Every
    dependency with a refused completion in the history (a stalled or cut-off holder
    whose complete returned false, a holder whose job was cancelled) is named: no
    dependent of it started before its accepted completion (or, with 'run', its end).
    And a dependent whose dependencies all succeeded (with 'run': all ended) is not
    left waiting at the end: it started, or a cancel of it may have applied. Jobs a
    retry touched are judged only on the last.
    """
    retried = _retried_jobs(h)
    violations: list[str] = []
    released = 0
    lags: list[float] = []
    refused_deps: dict[int, list[dict[str, Any]]] = {}
    for d in h.dependents:
        refused = [
            e
            for c in h.claims_of.get(d, [])
            for e in h.completes.get(c.token, [])
            if not e["answer"]
        ]
        if refused:
            refused_deps[d] = refused
    judged_after_refusal = 0
    for child, deps in sorted(h.depends_on.items()):
        job = h.jobs.get(child)
        if job is None:
            continue
        mode = h.dependency_mode.get(child, "cancel")
        ended = {d: _ended(h, d) for d in deps}
        if job.state == "waiting" and all(ended.values()):
            violations.append(
                f"job {child} is left waiting although each of its dependencies ended "
                f"({', '.join(f'{d} {x.state}' for d, x in ended.items() if x)})"
            )
        if child in retried or any(d in retried for d in deps):
            continue
        done = [x for x in ended.values() if x is not None]
        if len(done) < len(deps):
            continue
        if mode == "cancel" and any(x.state != "succeeded" for x in done):
            continue  # cancelled with it: invariant 23
        last = max(done, key=lambda x: x.finished_at or 0.0)
        assert last.finished_at is not None
        first = _first_start(h, job)
        cancelled_by_op = any(may_have_applied(e) for e in h.cancels.get(child, []))
        if first is None and not job.fence and not cancelled_by_op:
            violations.append(
                f"job {child} ({job.state}) never started although its last dependency "
                f"{last.id} ended {last.state} at {utc(last.finished_at)}"
            )
        at = _released_at(h, job)
        if at is not None:
            released += 1
            lags.append(at - last.finished_at)
            if at < last.finished_at - CLOCK_SLACK_S:
                violations.append(
                    f"job {child} was runnable from {utc(at)}, "
                    f"{last.finished_at - at:.3f} s before its last dependency {last.id} "
                    f"ended {last.state} at {utc(last.finished_at)}"
                )
        for d in deps:
            dep = ended[d]
            if d not in refused_deps or dep is None:
                continue
            assert dep.finished_at is not None
            judged_after_refusal += 1
            if first is not None and first.at < dep.finished_at - CLOCK_SLACK_S:
                e = min(refused_deps[d], key=lambda x: x["t"])
                violations.append(
                    f"job {child} started at {utc(first.at)}, after {e['proc']}'s complete of "
                    f"its dependency {d} was refused (answered at {utc(e['t'])}) and "
                    f"{dep.finished_at - first.at:.3f} s before that dependency ended "
                    f"{dep.state} at {utc(dep.finished_at)}"
                )
    lags.sort()
    refusals = sum(len(v) for v in refused_deps.values())
    return Invariant(
        "no dependent released by a refused completion: a dependent became runnable only "
        "with the accepted end of its last dependency, and none is left waiting",
        "history (the producers' graphs; complete answers; claims; releases; cancels) + "
        "database (run_at, finished_at, states, errors)",
        len(h.depends_on),
        violations,
        f"{released} dependents' release timed by their run_at"
        + (
            f" (after their last dependency's end by {lags[len(lags) // 2] * 1000:.1f} ms "
            f"median, {lags[-1] * 1000:.1f} ms at most)"
            if lags
            else ""
        )
        + f"; {refusals} refused completions of {len(refused_deps)} dependencies, "
        f"{judged_after_refusal} of their dependents judged against the accepted end",
    )


INVARIANTS: tuple[Callable[[HistoryIndex], Invariant], ...] = (
    terminal,
    nothing_lost,
    dedupe,
    final_token,
    single_holder,
    refused_completes,
    worker_reports,
    dead_attempts,
    same_token_effects,
    cross_token_effects,
    effect_of_success,
    fenced_ledger,
    idempotency_keys,
    leases_kept,
    no_crash,
    fences,
    nothing_from_paused,
    queue_limits,
    periodic_slots,
    concurrency,
    key_limits,
    rate_limits,
    dependencies_first,
    released_by_accepted,
)
