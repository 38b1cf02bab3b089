"""Run the real worker inline until the queues are empty, and look at what is enqueued.

`run_until_empty` starts the same worker `taskboard worker` runs
(`Taskboard.worker`), on its own event loop, and stops it once nothing of
its queues is runnable and nothing is in flight. It watches the worker
through the two seams the worker offers (its `queries`, and an event hook)
and never decides anything itself: a job counts as runnable as long as the
database's `claim` hands it out, and as finished once the database answered
its complete, fail or release. The outcomes it returns are what `get_job`
says afterwards: a job deleted meanwhile (pruned, or completed in a queue that
discards, `set_queue_discard`) has none.

`enqueued_jobs` and `assert_enqueued` read `find_jobs`; nothing here writes
to the database except the worker's own calls.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from taskboard.app import Taskboard
from taskboard.errors import StartupError, one_line, translate
from taskboard.events import JobEvent
from taskboard.settings import Settings, load_settings, name_problem
from taskboard.sql import admin, admin_async, parameters
from taskboard.sql import worker as sql_worker
from taskboard.tasks import worker_queues

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "JobOutcome",
    "StillRunnable",
    "arun_until_empty",
    "assert_enqueued",
    "enqueued_jobs",
    "run_until_empty",
]

DEFAULT_TIMEOUT_SECONDS = 30.0
# The worker's shutdown grace while it runs inline: once the queues are empty no
# handler runs, so it only bounds how long a timeout waits for hung handlers.
INLINE_SHUTDOWN_GRACE_SECONDS = 1.0
SNAPSHOT_TRIES = 10  # reads of what is still runnable before saying none is
SNAPSHOT_PAUSE_SECONDS = 0.05
LISTED = 20  # jobs named in a StillRunnable or an assert_enqueued failure, at most
ROLE_NEEDED = "taskboard_producer (PREFIX_producer if installed with another prefix)"

_runs = itertools.count(1)  # numbers each inline worker's name


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """A job an inline worker ran, as the database reports it after the run.

    `state` is the job's state then: ``succeeded``, ``dead``, ``cancelled``,
    or ``queued`` for a job that failed and waits for its next attempt (or
    that was handed back). `error` is the text of its latest failed attempt,
    None when it succeeded or never failed.
    """

    job_id: int
    task: str
    queue: str
    state: str
    attempt: int
    result: Any
    error: str | None


class StillRunnable(TimeoutError):
    """The queues did not empty within the timeout; `jobs` are those still runnable
    (running in the inline worker, or queued and due), `outcomes` what it ran so far."""

    def __init__(
        self, message: str, jobs: list[admin_async.JobInfo], outcomes: list[JobOutcome]
    ) -> None:
        super().__init__(message)
        self.jobs = jobs
        self.outcomes = outcomes


def run_until_empty(
    app: Taskboard,
    *,
    queues: Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[JobOutcome]:
    """Run `app`'s worker until no job of its queues (or of `queues`) is runnable.

    The worker is the real one, with the app's tasks, settings and hooks,
    on a new event loop in this thread; jobs that its handlers enqueue run
    too, and jobs due later (a retry's backoff, a `run_at` ahead) do not.
    Each periodic schedule's due slot is enqueued, as any worker does, and
    its job runs. Returns each job it ran, in the order they finished, with
    the state the database reports afterwards.

    Raises StillRunnable (a TimeoutError) naming the jobs still runnable
    when the queues are not empty after `timeout` seconds, StartupError
    when the database cannot be reached or the worker cannot work in it,
    ValueError for a `timeout` that is not a positive number or `queues`
    that are empty or hold a name no queue can have, and RuntimeError when
    called inside a running event loop: there, use `arun_until_empty`.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's body
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_until_empty() cannot run inside a running event loop (an async test or "
            "handler): use `await arun_until_empty(app)` there"
        )
    return asyncio.run(arun_until_empty(app, queues=queues, timeout=timeout))


async def arun_until_empty(
    app: Taskboard,
    *,
    queues: Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[JobOutcome]:
    """`run_until_empty` for async code: the worker runs on the running event loop."""
    if isinstance(queues, str):
        queues = [queues]
    if queues is not None:
        queues = list(queues)
        if not queues:
            raise ValueError(
                "queues=[] names no queue: leave queues out to run the worker's own queues"
            )
        for queue in queues:
            problem = name_problem("queues: each queue", queue)
            if problem:
                raise ValueError(problem)
    if isinstance(timeout, bool) or not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    settings = app.settings
    overrides: dict[str, Any] = {
        "worker_name": f"{settings.worker_name}-inline-{next(_runs)}",
        "shutdown_grace": min(settings.shutdown_grace, INLINE_SHUTDOWN_GRACE_SECONDS),
        "metrics_port": None,  # a test's worker serves no /metrics (nor takes its port)
    }
    if queues is not None:
        overrides["queues"] = list(queues)
    watch = _Watch(
        worker_queues(app.tasks, overrides.get("queues", settings.queues)),
        overrides["worker_name"],
        scheduled=bool(app.schedules),
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    # Connecting first fails at once on an unreachable database (the worker would wait for it).
    try:
        connected = await psycopg.AsyncConnection.connect(
            settings.database_url, **app.connect_kwargs(autocommit=True)
        )
    except psycopg.OperationalError as exc:
        raise StartupError(
            f"run_until_empty cannot connect to the app's database ({one_line(str(exc))}):"
            " start its server, or give the app a database_url that reaches one "
            "(TASKBOARD_DATABASE_URL; in a test, the taskboard_database fixture sets it)"
        ) from None
    async with connected as reader:
        stop = asyncio.Event()
        app.hooks.append(watch.hook)
        worker = asyncio.create_task(
            app.worker(stop=stop, queries=watch, **overrides), name="taskboard-inline-worker"
        )
        try:
            while True:
                watch.progress.clear()
                if watch.idle():
                    break
                left = deadline - loop.time()
                if left <= 0:
                    jobs = await _still_runnable(reader, watch)
                    outcomes = await _outcomes(reader, watch)
                    raise StillRunnable(_still_runnable_text(jobs, watch, timeout), jobs, outcomes)
                progress = asyncio.create_task(watch.progress.wait())
                await asyncio.wait(
                    [worker, progress], timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
                progress.cancel()
                if worker.done():
                    worker.result()  # the worker's own error (StartupError, ...)
                    raise RuntimeError("the inline worker stopped before the queues were empty")
        finally:
            stop.set()
            try:
                await worker
            finally:
                app.hooks.remove(watch.hook)
        return await _outcomes(reader, watch)


class _Watch(sql_worker.Queries):
    """The worker's SQL calls, unchanged, and what they say about the jobs of its queues.

    A queue is known empty when a claim for it came back empty with no
    change since the claim was sent. A change is anything that may make a
    job runnable: a claim of this worker ending (its handler may have
    enqueued, its job may be queued again at once), or a periodic slot
    enqueued. The completions that travel with a claim in one statement
    ended before that claim, so they do not count against that one claim
    (they do against every other queue's). With periodic schedules, only a
    claim sent after the scheduler's first pass began counts: the worker
    claims before its chores, so the first claims come back empty before
    the due slots are enqueued.
    """

    def __init__(self, queues: Sequence[str], worker: str, *, scheduled: bool = False) -> None:
        self.queues = list(queues)
        self.worker = worker
        # False until the scheduler's first pass asks for the clock (never with no schedule).
        self.scheduler_passed = not scheduled
        self.held: dict[uuid.UUID, int] = {}  # token -> job id, claimed and not yet ended
        self.changes = 0
        self.empty_at: dict[str, int] = {}  # queue -> `changes` when its claim came back empty
        self.finished: dict[int, None] = {}  # job ids, in the order they last finished
        # The last complete_many_then_claim that came back with no job: its queue, the
        # tokens it completed whose end is still to be noted, and `changes` once all are.
        self.with_claim: tuple[str, set[uuid.UUID], int] | None = None
        self.progress = asyncio.Event()

    def idle(self) -> bool:
        """Nothing held, and every queue's claim came back empty since the last change."""
        return not self.held and all(self.empty_at.get(q) == self.changes for q in self.queues)

    def hook(self, event: JobEvent) -> None:
        if event.worker != self.worker or event.kind not in ("settled", "released", "lost"):
            return
        self.held.pop(event.token, None)
        self.finished.pop(event.job_id, None)
        self.finished[event.job_id] = None
        self.changes += 1
        if self.with_claim is not None and event.token in self.with_claim[1]:
            queue, tokens, expected = self.with_claim
            tokens.discard(event.token)
            if not tokens:
                self.with_claim = None
                # That claim came after these completions: it counts if nothing else changed.
                if self.changes == expected:
                    self.empty_at[queue] = self.changes
        self.progress.set()

    def _sent_at_change(self) -> int | None:
        """`changes` as a claim is sent, None when its coming back empty proves nothing."""
        return self.changes if self.scheduler_passed else None

    def _claimed(
        self, queue: str, rows: list[sql_worker.Claimed], sent_at_change: int | None
    ) -> None:
        for row in rows:
            self.held[row.token] = row.job_id
        if not rows and self.changes == sent_at_change:
            self.empty_at[queue] = sent_at_change
        self.progress.set()

    async def claim(
        self, conn: psycopg.AsyncConnection[Any], queue: str, worker: str, batch: int, lease: float
    ) -> list[sql_worker.Claimed]:
        sent_at_change = self._sent_at_change()
        rows = await super().claim(conn, queue, worker, batch, lease)
        self._claimed(queue, rows, sent_at_change)
        return rows

    async def complete_many_then_claim(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
        claim_args: tuple[str, str, int, float],
    ) -> tuple[list[tuple[int, bool]], list[sql_worker.Claimed]]:
        sent_at_change = self._sent_at_change()
        answers, rows = await super().complete_many_then_claim(
            conn, job_ids, tokens, results_json, claim_args
        )
        for row in rows:
            self.held[row.token] = row.job_id
        self.with_claim = None
        if not rows and sent_at_change is not None and self.changes == sent_at_change:
            completed = set(tokens)
            self.with_claim = (claim_args[0], completed, sent_at_change + len(completed))
        self.progress.set()
        return answers, rows

    async def clock(self, conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
        # Only the scheduler asks, as its pass begins: the claims sent after it count.
        now = await super().clock(conn)
        self.scheduler_passed = True
        return now

    async def enqueue_periodic(
        self,
        conn: psycopg.AsyncConnection[Any],
        schedule: str,
        slot: Any,
        task: str,
        payload_json: str,
        queue: str,
        priority: int,
        max_attempts: int,
        previous_names: Sequence[str] = (),
    ) -> int | None:
        job_id = await super().enqueue_periodic(
            conn, schedule, slot, task, payload_json, queue, priority, max_attempts, previous_names
        )
        if job_id is not None:
            self.changes += 1
            self.progress.set()
        return job_id


async def _outcomes(reader: psycopg.AsyncConnection[Any], watch: _Watch) -> list[JobOutcome]:
    outcomes = []
    for job_id in list(watch.finished):
        with translate(role_needed=ROLE_NEEDED):
            job = await admin_async.aget_job(reader, parameters.job_params(job_id))
        if job is not None:  # None: deleted meanwhile (pruned, discarded, or by the test)
            outcomes.append(_outcome(job))
    return outcomes


def _outcome(job: admin_async.JobInfo) -> JobOutcome:
    error = None
    if job.state != "succeeded" and job.errors:
        error = str(job.errors[-1].get("error"))
    return JobOutcome(
        job_id=job.job_id,
        task=job.task,
        queue=job.queue,
        state=job.state,
        attempt=job.attempt,
        result=job.result,
        error=error,
    )


async def _still_runnable(
    reader: psycopg.AsyncConnection[Any], watch: _Watch
) -> list[admin_async.JobInfo]:
    """The jobs running in the inline worker, then those queued and due, of its queues.

    The worker runs on meanwhile, so a job may move from queued to held
    between the two reads; a read that finds none is taken again a few
    times before saying so.
    """
    for _ in range(SNAPSHOT_TRIES):
        found = await _runnable_once(reader, watch)
        if found:
            break
        await asyncio.sleep(SNAPSHOT_PAUSE_SECONDS)
    return found


async def _runnable_once(
    reader: psycopg.AsyncConnection[Any], watch: _Watch
) -> list[admin_async.JobInfo]:
    held = set(watch.held.values())
    now = await sql_worker.clock(reader)
    queued: list[admin_async.JobInfo] = []
    with translate(role_needed=ROLE_NEEDED):
        for queue in watch.queues:
            params = parameters.find_jobs_params(queue, "queued", None, None, parameters.MAX_PAGE)
            queued.extend(job for job in reversed(await admin_async.afind_jobs(reader, params)))
        held |= set(watch.held.values())  # claimed while the queues were read
        found: dict[int, admin_async.JobInfo] = {}
        for job_id in sorted(held):
            job = await admin_async.aget_job(reader, parameters.job_params(job_id))
            if job is not None and job.state in ("running", "queued"):  # not ended meanwhile
                found[job.job_id] = job
    for job in queued:
        if job.run_at <= now:
            found.setdefault(job.job_id, job)
    return list(found.values())


def _still_runnable_text(jobs: list[admin_async.JobInfo], watch: _Watch, timeout: float) -> str:
    running = set(watch.held.values())
    lines = [
        f"run_until_empty: after {timeout:g}s, jobs of queue "
        f"{', '.join(map(repr, watch.queues))} are still runnable:"
    ]
    for job in jobs[:LISTED]:
        where = "running in the inline worker" if job.job_id in running else "queued and due"
        lines.append(f"  job {job.job_id}: task {job.task!r}, queue {job.queue!r}, {where}")
    if len(jobs) > LISTED:
        lines.append(f"  ... and {len(jobs) - LISTED} more")
    if not jobs:
        lines.append("  none now (the last ones ended as the time ran out)")
    lines.append(
        "A handler that enqueues a job every time it runs keeps its queue from emptying; "
        "a slow one needs a larger timeout="
    )
    return "\n".join(lines)


# -- what is enqueued ------------------------------------------------------------------


def enqueued_jobs(
    *,
    task: str | None = None,
    queue: str | None = None,
    payload: Any = None,
    app: Taskboard | None = None,
) -> list[admin_async.JobInfo]:
    """The queued jobs (waiting to run, now or later) matching every filter given, oldest first.

    `payload` matches a job whose payload has each key given with an
    equal value (compared as JSON, as the job stores it); a payload that is
    not a mapping must equal the job's. Reads the database of `app`, or
    without one that of TASKBOARD_DATABASE_URL.
    """
    wanted = _as_stored(payload)
    return [
        job
        for job in _queued(app, task=task, queue=queue)
        if payload is None or _payload_matches(job.payload, wanted)
    ]


def assert_enqueued(
    *,
    task: str | None = None,
    payload: Any = None,
    queue: str | None = None,
    app: Taskboard | None = None,
) -> admin_async.JobInfo:
    """Return the oldest queued job that matches (see `enqueued_jobs`); AssertionError else.

    The error lists the jobs that are queued (task, queue and payload of
    each), so that a near miss shows.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's body
    queued = _queued(app)
    wanted = _as_stored(payload)
    for job in queued:
        if (
            (task is None or job.task == task)
            and (queue is None or job.queue == queue)
            and (payload is None or _payload_matches(job.payload, wanted))
        ):
            return job
    asked = ", ".join(
        f"{name}={value!r}"
        for name, value in (("task", task), ("queue", queue), ("payload", payload))
        if value is not None
    )
    lines = [f"no queued job matches {asked or 'anything'}"]
    if not queued:
        lines.append("no job is queued")
    else:
        lines.append(f"queued jobs ({len(queued)}):")
        for job in queued[:LISTED]:
            lines.append(
                f"  job {job.job_id}: task {job.task!r}, queue {job.queue!r}, "
                f"payload {job.payload!r}"
            )
        if len(queued) > LISTED:
            lines.append(f"  ... and {len(queued) - LISTED} more")
    raise AssertionError("\n".join(lines))


def _queued(
    app: Taskboard | None, *, task: str | None = None, queue: str | None = None
) -> list[admin_async.JobInfo]:
    """Every queued job matching `task` and `queue`, oldest first (find_jobs, page by page)."""
    settings: Settings = app.settings if app is not None else load_settings()
    jobs: list[admin_async.JobInfo] = []
    after_id = None
    with (
        psycopg.connect(
            settings.database_url, **settings.connection_options(autocommit=True)
        ) as conn,
        translate(role_needed=ROLE_NEEDED),
    ):
        while True:
            params = parameters.find_jobs_params(
                queue, "queued", task, after_id, parameters.MAX_PAGE
            )
            page = admin.find_jobs(conn, params)
            jobs.extend(page)
            if len(page) < parameters.MAX_PAGE:
                break
            after_id = page[-1].job_id
    return sorted(jobs, key=lambda job: job.job_id)


def _as_stored(payload: Any) -> Any:
    """`payload` as a job stores it: a pydantic model's JSON form, then through JSON."""
    if payload is None:
        return None
    dump = getattr(payload, "model_dump", None)
    if callable(dump):
        payload = dump(mode="json")
    try:
        return json.loads(parameters.json_text(payload))
    except parameters.NotJSON:
        return payload  # compared as it is: it matches no stored payload


def _payload_matches(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping) and isinstance(stored, Mapping):
        return all(key in stored and stored[key] == value for key, value in wanted.items())
    return bool(stored == wanted)
