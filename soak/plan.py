"""What a soak run does, drawn up front from its seed: the jobs, the faults, the operations.

The same seed gives the same job mix (tasks, payloads, priorities, schedules,
dedupe keys, batches and when each is sent), the same fault schedule (kind,
time, target worker slot, duration) and the same operations an administrator
makes under load (pauses and resumes, queue limits, retries: kind, time,
queue, value). What the operating system and the server make of it (which
job a killed worker held, which claim a restart cut off, which job a cancel
or a retry finds) differs from run to run.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LEASE_S = 2.0
RENEW_EVERY_S = 0.5
POOL_SIZE = 8  # 6 handler slots per worker
# Plain-only workers: one more worker process per run, with an app that
# registers only the tasks of the queues that hold no transactional task
# (PLAIN_QUEUES) and claims only those queues. Its handlers hold no
# connection, so it runs up to PLAIN_CONCURRENCY of them on PLAIN_POOL_SIZE
# connections (2 of them handler connections, for still_holder()).
PLAIN_WORKERS = 1
PLAIN_POOL_SIZE = 4
PLAIN_CONCURRENCY = 32
PRODUCERS = 3
DEFAULT_JOBS = 20_000
DEFAULT_SECONDS = 240.0  # load and faults; setup, drain and checks add about a minute
DEFAULT_WORKERS = 4
QUICK_JOBS = 1_500
QUICK_SECONDS = 20.0
QUICK_WORKERS = 3
# The load: a steady stream for the first STEADY_SHARE of the fault phase,
# then a burst of BURST_SHARE of the requests within BURST_SPREAD_S, whose
# drain under faults measures what the workers sustain when saturated.
STEADY_SHARE = 0.6
BURST_SHARE = 0.3
BURST_SPREAD_S = 2.0
FAULTS_FROM_S = 2.0
FAULTS_UNTIL_SHARE = 0.85  # no new fault after this share of the fault phase
QUICK_FAULTS_UNTIL_SHARE = 0.75
QUICK_MAX_ATTEMPTS = 4  # retries back off 2^attempt s: keeps the quick drain short
FAULT_MEAN_GAP_S = 4.5  # mean gap between two random process/connection faults
QUICK_FAULT_MEAN_GAP_S = 1.5
RESTART_CLEARANCE_S = 3.0  # no other fault this close to a restart
QUICK_RESTART_CLEARANCE_S = 1.5
DEFAULT_MAX_ATTEMPTS = 5
DOOMED_MAX_ATTEMPTS = 3

QUEUES = ("email", "ledger", "partner", "sync", "metered")

# task name: (queue, share of requests). The handlers are in soak/app.py.
TASK_MIX: dict[str, tuple[str, float]] = {
    "email.send": ("email", 0.29),  # async; asks still_holder() right before its effect
    "report.render": ("email", 0.25),  # sync, in a thread; no holder check
    "ledger.post": ("ledger", 0.10),  # transactional: a fenced row in the same database
    "batch.long": ("ledger", 0.01),  # runs 1.5 to 3 leases: renewal must carry it
    "flaky": ("email", 0.04),  # fails its first attempt on purpose
    "doomed": ("ledger", 0.01),  # always fails: dead after DOOMED_MAX_ATTEMPTS
    "dedupe.sync": ("email", 0.15),  # carries dedupe keys; every producer sends it
    "partner.call": ("partner", 0.06),  # a call to a partner's API, its queue limited
    "customer.sync": ("sync", 0.05),  # most carry a concurrency key; its queue has a key limit
    "meter.call": ("metered", 0.04),  # a metered API's call, its queue under a rate limit
}
TRANSACTIONAL_TASKS = ("ledger.post",)
# The queues a plain-only worker claims: those without a transactional task.
PLAIN_QUEUES = tuple(q for q in QUEUES if not any(TASK_MIX[t][0] == q for t in TRANSACTIONAL_TASKS))
HOLD_SHARE = 0.05  # of ledger.post: hold the pool connection past the lease (pg_sleep)
MIN_BATCHES_PER_TASK = 3
# The tasks of the queues with a key or rate limit: however the batches fell,
# this many jobs each, so that their limits are reached (the soak's test checks
# that invariants 21 and 22 fail with the limits lowered by one).
MIN_JOBS_PER_LIMITED_TASK = 48
SCHEDULED_SHARE = 0.08  # of batches: run_at a little in the future
PRIORITIES = (-5, 0, 0, 0, 0, 10)
PARTNER_MS = (50, 300)  # partner.call: how long the partner's API takes
# Per-key concurrency: the queue `sync` has a limit per concurrency key, set
# before any job exists and kept through the drain; its customer.sync jobs
# carry one of a handful of keys (so that keys are contended), some none.
KEYED_QUEUE = "sync"
KEY_LIMIT = 2  # taskboard.set_key_limit(KEYED_QUEUE, KEY_LIMIT)
CONCURRENCY_KEYS = 4  # customer-0 .. customer-3
UNKEYED_SHARE = 0.15  # of customer.sync jobs: no key
SYNC_MS = (50, 250)  # customer.sync: how long one customer's sync takes
# Rate limits, set before any job exists and kept through the drain: the
# queue `metered` starts at most RATE_STARTS of its jobs per RATE_PER_S (a
# short window, so that any batch of a few jobs fills one), and the keyed
# queue at most KEY_RATE_STARTS of one key's jobs per KEY_RATE_PER_S (by key,
# beside its key limit). Reclaims count as starts.
RATED_QUEUE = "metered"
RATE_STARTS = 2  # taskboard.set_rate_limit(RATED_QUEUE, RATE_STARTS, RATE_PER_S)
RATE_PER_S = 0.25
KEY_RATE_STARTS = 4  # taskboard.set_rate_limit(KEYED_QUEUE, KEY_RATE_STARTS, KEY_RATE_PER_S, true)
KEY_RATE_PER_S = 1.0
# (queue, starts, per in seconds, by_key): every rate limit a run sets.
RATE_LIMITS: tuple[tuple[str, int, float, bool], ...] = (
    (RATED_QUEUE, RATE_STARTS, RATE_PER_S, False),
    (KEYED_QUEUE, KEY_RATE_STARTS, KEY_RATE_PER_S, True),
)
METER_MS = (150, 600)  # meter.call: how long the metered API takes
# Dependencies: small graphs of jobs enqueued together (app.group()), a few
# percent of the jobs: a child waiting for 2 to 4 parents of the tasks
# above (some doomed or flaky, all under the faults), or a chain of 3 jobs,
# each waiting for the one before. Some children run whatever their
# dependencies' end (on_dependency_failure "run"). Drawn from a stream of
# their own: the other batches of a seed stay what they were.
GRAPH_SHARE = 0.03  # of the jobs
MIN_GRAPHS = 6
GRAPH_TASK = "graph"  # a Batch of a graph: its jobs' tasks are in Batch.graph
CHAIN_SHARE = 0.3  # of graphs: a chain of CHAIN_LENGTH
CHAIN_LENGTH = 3
RUN_ANYWAY_SHARE = 0.3  # of dependents: on_dependency_failure "run"
PARENTS = (2, 4)
# Faults aimed at a running job others wait for (quick run, default run), beside the others.
AIMED_FAULTS = {"kill": (1, 4), "stop": (2, 6), "cancel": (2, 6)}
# How long the jobs of a graph without dependencies run (ms; partner.call, customer.sync
# and meter.call keep their own): long enough for an aimed fault to find them running.
PARENT_MS = (300, 1500)
# The tasks a graph's jobs run, and their weights (doomed and flaky more often
# than in the mix: their dependents see failures and retried attempts).
PARENT_TASKS: dict[str, float] = {
    "email.send": 0.22,
    "report.render": 0.18,
    "ledger.post": 0.14,
    "flaky": 0.12,
    "doomed": 0.08,
    "partner.call": 0.08,
    "customer.sync": 0.08,
    "meter.call": 0.06,
    "batch.long": 0.04,
}
CHILD_TASKS: dict[str, float] = {
    "email.send": 0.35,
    "report.render": 0.3,
    "ledger.post": 0.2,
    "flaky": 0.1,
    "partner.call": 0.05,
}

# Operations under load, made by the runner through the driver's management
# API as the admin role, from FAULTS_FROM_S until the faults end.
PAUSE_MEAN_GAP_S = 12.0  # between two pauses (of any queue)
QUICK_PAUSE_MEAN_GAP_S = 3.0
PAUSE_S = (1.0, 6.0)  # how long a queue stays paused
QUICK_PAUSE_S = (0.5, 2.5)
PAUSE_WEIGHTS = {"email": 0.4, "ledger": 0.3, "partner": 0.3}
LIMIT_MEAN_GAP_S = 8.0  # between two limit changes of one queue
QUICK_LIMIT_MEAN_GAP_S = 2.0
# The limits each limited queue gets (None: the limit removed). Every
# limited queue starts limited, and its limit is removed when the
# operations end, so that the drain runs free.
LIMITS: dict[str, tuple[int | None, ...]] = {
    "partner": (1, 2, 2, 3, 5, None),
    "ledger": (3, 6, 10, None),
}
RETRY_EVERY_JOBS = 600  # one retry of a dead or cancelled job per this many requests
MIN_RETRIES = 4
RETRIES_FROM_SHARE = 0.3  # of the operations' window: dead and cancelled jobs exist by then


@dataclass(frozen=True)
class Config:
    jobs: int
    seconds: float
    workers: int
    seed: int
    quick: bool = False
    producers: int = PRODUCERS
    lease: float = LEASE_S
    renew_every: float = RENEW_EVERY_S
    pool_size: int = POOL_SIZE
    plain_workers: int = PLAIN_WORKERS
    plain_pool_size: int = PLAIN_POOL_SIZE
    plain_concurrency: int = PLAIN_CONCURRENCY

    @property
    def slots(self) -> int:
        """Worker slots: 0 to workers - 1 run every task, the rest only plain ones."""
        return self.workers + self.plain_workers

    def is_plain(self, slot: int) -> bool:
        return slot >= self.workers

    @property
    def steady_seconds(self) -> float:
        return self.seconds * STEADY_SHARE

    @property
    def drain_timeout(self) -> float:
        # Retries back off 2^attempt s: a job failed by faults 4 times waits 16 s.
        return 60.0 if self.quick else 150.0


@dataclass
class Batch:
    """One enqueue_many call (sent by every producer when it carries dedupe keys)."""

    index: int
    at: float  # seconds after the start of the fault phase
    task: str
    queue: str
    priority: int
    delay: float | None  # run_at = now + delay
    max_attempts: int
    payloads: list[dict[str, Any]]
    keys: list[str | None] | None
    producers: list[int]
    concurrency_keys: list[str | None] | None = None
    # A graph (task GRAPH_TASK): per payload, its job's task, queue, max_attempts,
    # concurrency key, the earlier jobs of the batch it depends on (`after`, their
    # indexes) and its on_dependency_failure (None without dependencies).
    graph: list[dict[str, Any]] | None = None

    def jobs(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(task, queue, payload) of each job of the batch."""
        if self.graph is None:
            return [(self.task, self.queue, p) for p in self.payloads]
        return [(n["task"], n["queue"], p) for n, p in zip(self.graph, self.payloads, strict=True)]


@dataclass
class Fault:
    at: float  # seconds after the start of the fault phase
    kind: str  # kill, stop, terminate, restart-fast, restart-immediate, cancel
    slot: int = -1  # the worker slot hit (kill, stop, terminate)
    duration: float = 0.0  # stop: how long stopped; restart: how long down
    share: float = 1.0  # terminate: share of the worker's connections cut
    # "dependency": a kill or stop of the worker holding a running job that others
    # wait for (else, after a while, of its slot's worker); a cancel of such a job.
    aim: str = ""


@dataclass
class Operation:
    """What an administrator does under load, through the driver's management API."""

    at: float  # seconds after the start of the fault phase
    kind: str  # pause, resume, limit, retry (cancels are faults: they hit a holder)
    queue: str = ""  # pause, resume, limit
    limit: int | None = None  # limit: the new max_running (None: no limit)


@dataclass
class Plan:
    config: Config
    batches: list[Batch] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1)

    def save(self, path: Path) -> None:
        path.write_text(self.to_json())

    @staticmethod
    def load(path: Path) -> Plan:
        raw = json.loads(path.read_text())
        # A plan drawn before plain-only workers existed had none.
        raw["config"].setdefault("plain_workers", 0)
        return Plan(
            Config(**raw["config"]),
            [Batch(**b) for b in raw["batches"]],
            [Fault(**f) for f in raw["faults"]],
            [Operation(**o) for o in raw.get("operations", [])],
        )


def make_plan(config: Config, *, restarts: bool, faults: bool = True) -> Plan:
    """Draw the run from `config.seed`. Without `restarts` (a server that is
    not ours) no restart faults are planned; without `faults`, no fault and
    no operation at all (a baseline)."""
    rng = random.Random(config.seed)
    plan = Plan(config)
    plan.batches = _batches(config, rng)
    plan.faults = _faults(config, rng, restarts=restarts) if faults else []
    # Operations draw from a stream of their own: the jobs and faults of a
    # seed stay what they were without them.
    plan.operations = (
        _operations(config, random.Random(f"operations-{config.seed}")) if faults else []
    )
    return plan


def _batches(config: Config, rng: random.Random) -> list[Batch]:
    names = list(TASK_MIX)
    weights = [TASK_MIX[n][1] for n in names]
    key_space = max(40, config.jobs // 100)
    batches: list[Batch] = []
    planned = 0
    graphs = _graphs(config, random.Random(f"graphs-{config.seed}"))
    graph_jobs = sum(len(g.payloads) for g in graphs)
    while planned < config.jobs - graph_jobs:
        task = rng.choices(names, weights)[0]
        most = 12 if task == "dedupe.sync" else (3 if task == "batch.long" else 40)
        size = min(rng.randint(1, most), config.jobs - graph_jobs - planned)
        batches.append(_batch(task, len(batches), size, config, rng, key_space))
        planned += size
    # The graphs among the others, at places drawn from their own stream.
    placer = random.Random(f"graph-places-{config.seed}")
    for graph in graphs:
        batches.insert(placer.randrange(len(batches) + 1), graph)
    # However small the run, every kind of task comes a few times.
    for task in ("batch.long", "flaky", "doomed", "dedupe.sync", "customer.sync", "meter.call"):
        while sum(1 for b in batches if b.task == task) < MIN_BATCHES_PER_TASK:
            position = rng.randrange(len(batches) + 1)
            batches.insert(
                position, _batch(task, position, rng.randint(1, 3), config, rng, key_space)
            )
    for task in ("customer.sync", "meter.call"):
        while sum(len(b.payloads) for b in batches if b.task == task) < MIN_JOBS_PER_LIMITED_TASK:
            position = rng.randrange(len(batches) + 1)
            batches.insert(
                position, _batch(task, position, rng.randint(8, 24), config, rng, key_space)
            )
    for index, batch in enumerate(batches):
        batch.index = index
        if batch.task != "dedupe.sync":
            batch.producers = [index % config.producers]
    burst_from = len(batches)
    sent = 0
    for batch in batches:
        if sent >= config.jobs * (1 - BURST_SHARE):
            burst_from = batch.index
            break
        sent += len(batch.payloads)
    step = config.steady_seconds / max(burst_from, 1)
    for batch in batches[:burst_from]:
        batch.at = round(batch.index * step + rng.uniform(0, step), 4)
    for batch in batches[burst_from:]:
        batch.at = round(config.steady_seconds + rng.uniform(0, BURST_SPREAD_S), 4)
    return batches


def _batch(
    task: str, index: int, size: int, config: Config, rng: random.Random, key_space: int
) -> Batch:
    queue = TASK_MIX[task][0]
    keyed = task == "dedupe.sync"
    payloads = [_payload(task, config, rng) for _ in range(size)]
    keys: list[str | None] | None = None
    if keyed:
        keys = [
            None if rng.random() < 0.15 else f"key-{rng.randrange(key_space)}" for _ in range(size)
        ]
        if size > 1 and rng.random() < 0.2:
            keys[-1] = keys[0]  # a key repeated inside one array
    concurrency_keys: list[str | None] | None = None
    if queue == KEYED_QUEUE:
        concurrency_keys = [
            None if rng.random() < UNKEYED_SHARE else f"customer-{rng.randrange(CONCURRENCY_KEYS)}"
            for _ in range(size)
        ]
    latest = min(15.0, config.seconds / 4)
    delay = round(rng.uniform(0.5, latest), 3) if rng.random() < SCHEDULED_SHARE else None
    max_attempts = _max_attempts(task, config)
    return Batch(
        index=index,
        at=0.0,
        task=task,
        queue=queue,
        priority=rng.choice(PRIORITIES),
        delay=delay,
        max_attempts=max_attempts,
        payloads=payloads,
        keys=keys,
        producers=list(range(config.producers)) if keyed else [index % config.producers],
        concurrency_keys=concurrency_keys,
    )


def _graphs(config: Config, rng: random.Random) -> list[Batch]:
    """The run's graphs of dependent jobs: GRAPH_SHARE of its jobs, MIN_GRAPHS at least;
    among them a chain, a child run anyway and a doomed parent, however small the run."""
    count = max(MIN_GRAPHS, round(config.jobs * GRAPH_SHARE / 3.5))
    graphs: list[Batch] = []
    for i in range(count):
        chain = rng.random() < CHAIN_SHARE if i > 2 else i == 0
        run_anyway = rng.random() < RUN_ANYWAY_SHARE if i > 2 else i == 1
        parents = CHAIN_LENGTH - 1 if chain else rng.randint(*PARENTS)
        tasks = [_draw(rng, PARENT_TASKS) for _ in range(parents)]
        if i == 2 or (i == 1 and not chain):
            tasks[0] = "doomed"  # a parent that dies: its dependents are cancelled, or run
        tasks.append(_draw(rng, CHILD_TASKS))
        nodes: list[dict[str, Any]] = []
        for n, task in enumerate(tasks):
            if chain:
                after = [n - 1] if n > 0 else []
            else:
                after = list(range(parents)) if n == parents else []
            mode = None
            if after:
                mode = "run" if run_anyway and n == len(tasks) - 1 else "cancel"
            queue = TASK_MIX[task][0]
            nodes.append(
                {
                    "task": task,
                    "queue": queue,
                    "max_attempts": _max_attempts(task, config),
                    "concurrency_key": (
                        f"customer-{rng.randrange(CONCURRENCY_KEYS)}"
                        if queue == KEYED_QUEUE
                        else None
                    ),
                    "after": after,
                    "on_failure": mode,
                }
            )
        graphs.append(
            Batch(
                index=0,
                at=0.0,
                task=GRAPH_TASK,
                queue="",
                priority=rng.choice(PRIORITIES),
                delay=None,
                max_attempts=0,
                payloads=[_parent_payload(t, config, rng) for t in tasks[:-1]]
                + [_payload(tasks[-1], config, rng)],
                keys=None,
                producers=[0],
                graph=nodes,
            )
        )
    return graphs


def _parent_payload(task: str, config: Config, rng: random.Random) -> dict[str, Any]:
    payload = _payload(task, config, rng)
    if task in ("email.send", "report.render", "ledger.post", "flaky", "doomed"):
        payload["ms"] = rng.randint(*PARENT_MS)
    return payload


def _draw(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), list(weights.values()))[0]


def _max_attempts(task: str, config: Config) -> int:
    if task == "doomed":
        return DOOMED_MAX_ATTEMPTS
    return QUICK_MAX_ATTEMPTS if config.quick else DEFAULT_MAX_ATTEMPTS


def _payload(task: str, config: Config, rng: random.Random) -> dict[str, Any]:
    payload: dict[str, Any] = {"ms": rng.randint(2, 30)}
    if task == "dedupe.sync":
        payload["ms"] = rng.randint(50, 400)
    elif task == "batch.long":
        payload["run"] = round(config.lease * rng.uniform(1.5, 3.0), 3)
    elif task == "partner.call":
        payload["ms"] = rng.randint(*PARTNER_MS)
    elif task == "customer.sync":
        payload["ms"] = rng.randint(*SYNC_MS)
    elif task == "meter.call":
        payload["ms"] = rng.randint(*METER_MS)
    elif task == "ledger.post" and rng.random() < HOLD_SHARE:
        payload["hold"] = round(config.lease * rng.uniform(1.2, 2.0), 3)
    return payload


def _faults(config: Config, rng: random.Random, *, restarts: bool) -> list[Fault]:
    start = FAULTS_FROM_S
    end = config.seconds * (QUICK_FAULTS_UNTIL_SHARE if config.quick else FAULTS_UNTIL_SHARE)
    faults: list[Fault] = []
    # Restarts: evenly spread, fast and immediate alternating, each alone.
    restart_count = (2 if config.quick else 4) if restarts else 0
    restart_times: list[float] = []
    for i in range(restart_count):
        slot_start = start + (end - start) * (i + 0.25) / restart_count
        at = slot_start + rng.uniform(0, (end - start) / restart_count * 0.5)
        mode = "restart-fast" if i % 2 == 0 else "restart-immediate"
        faults.append(Fault(at=round(at, 3), kind=mode, duration=round(rng.uniform(0.2, 1.5), 3)))
        restart_times.append(at)
    # Process and connection faults: a Poisson stream, kept clear of restarts.
    gap = QUICK_FAULT_MEAN_GAP_S if config.quick else FAULT_MEAN_GAP_S
    clearance = QUICK_RESTART_CLEARANCE_S if config.quick else RESTART_CLEARANCE_S
    at = start
    kinds = ("kill", "stop", "terminate")
    stream: list[Fault] = []
    while True:
        at += rng.expovariate(1.0 / gap)
        if at >= end:
            break
        if any(abs(at - r) < clearance for r in restart_times):
            continue
        stream.append(Fault(at=round(at, 3), kind=rng.choices(kinds, (0.3, 0.25, 0.45))[0]))
    # Every kind at least once, however short the run.
    for kind in kinds:
        if len(stream) >= len(kinds) and not any(f.kind == kind for f in stream):
            counts = {k: sum(1 for f in stream if f.kind == k) for k in kinds}
            donor = max(counts, key=lambda k: counts[k])
            rng.choice([f for f in stream if f.kind == donor]).kind = kind
    for fault in stream:
        fault.slot = rng.randrange(config.slots)
    # Every kind hits a plain-only worker at least once when the workers with every
    # task keep one of it, and some fault hits a plain-only worker, however short the run.
    plain = [slot for slot in range(config.slots) if config.is_plain(slot)]
    for kind in kinds if plain else ():
        of_kind = [f for f in stream if f.kind == kind]
        if len(of_kind) >= 2 and not any(config.is_plain(f.slot) for f in of_kind):
            rng.choice(of_kind).slot = rng.choice(plain)
    if plain and stream and not any(config.is_plain(f.slot) for f in stream):
        rng.choice(stream).slot = rng.choice(plain)
    for fault in stream:
        if fault.kind == "stop":
            fault.duration = round(config.lease * rng.uniform(1.3, 2.5), 3)
        elif fault.kind == "terminate":
            fault.share = 1.0 if rng.random() < 0.5 else round(rng.uniform(0.2, 0.8), 2)
    faults += stream
    # Cancels of unfinished jobs (most of them running, to refuse a holder).
    for _ in range(max(5, config.jobs // 500)):
        faults.append(Fault(at=round(rng.uniform(start, end), 3), kind="cancel"))
    # Kills, stops and cancels aimed at a running job others wait for, beside the
    # others and drawn from a stream of their own (the rest of a seed's plan stays
    # what it was), kept clear of restarts. A kill or stop that finds no such job
    # hits its slot's worker (one with every task) as the others do.
    aimer = random.Random(f"aims-{config.seed}")
    for kind, (quick, default) in AIMED_FAULTS.items():
        for _ in range(quick if config.quick else default):
            while True:
                at = aimer.uniform(start, end)
                if not any(abs(at - r) < clearance for r in restart_times):
                    break
            fault = Fault(at=round(at, 3), kind=kind, aim="dependency")
            if kind == "stop":
                fault.duration = round(config.lease * aimer.uniform(1.3, 2.5), 3)
            if kind != "cancel":
                fault.slot = aimer.randrange(config.workers)
            faults.append(fault)
    faults.sort(key=lambda f: f.at)
    return faults


def _operations(config: Config, rng: random.Random) -> list[Operation]:
    start = FAULTS_FROM_S
    end = config.seconds * (QUICK_FAULTS_UNTIL_SHARE if config.quick else FAULTS_UNTIL_SHARE)
    ops: list[Operation] = []
    # Limits: each limited queue is limited from the start, changed now and
    # then (lowered below what runs, raised, removed), and freed at the end.
    gap = QUICK_LIMIT_MEAN_GAP_S if config.quick else LIMIT_MEAN_GAP_S
    for queue, values in LIMITS.items():
        at = start
        ops.append(Operation(at=at, kind="limit", queue=queue, limit=values[0]))
        while True:
            at += rng.expovariate(1.0 / gap)
            if at >= end:
                break
            ops.append(
                Operation(at=round(at, 3), kind="limit", queue=queue, limit=rng.choice(values))
            )
        ops.append(Operation(at=round(end, 3), kind="limit", queue=queue, limit=None))
    # Pauses: a stream over every queue; a queue is paused again only once resumed.
    gap = QUICK_PAUSE_MEAN_GAP_S if config.quick else PAUSE_MEAN_GAP_S
    shortest, longest = QUICK_PAUSE_S if config.quick else PAUSE_S
    queues = list(PAUSE_WEIGHTS)
    paused_until = dict.fromkeys(queues, 0.0)
    at = start
    while True:
        at += rng.expovariate(1.0 / gap)
        if at >= end:
            break
        queue = rng.choices(queues, [PAUSE_WEIGHTS[q] for q in queues])[0]
        until = min(at + rng.uniform(shortest, longest), end)
        if at < paused_until[queue]:
            continue
        paused_until[queue] = until
        ops.append(Operation(at=round(at, 3), kind="pause", queue=queue))
        ops.append(Operation(at=round(until, 3), kind="resume", queue=queue))
    # Retries of dead or cancelled jobs, once some exist.
    first = start + (end - start) * RETRIES_FROM_SHARE
    for _ in range(max(MIN_RETRIES, config.jobs // RETRY_EVERY_JOBS)):
        ops.append(Operation(at=round(rng.uniform(first, end), 3), kind="retry"))
    ops.sort(key=lambda o: o.at)
    return ops
