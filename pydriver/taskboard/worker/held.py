"""Held claims: one explicit state per claim, keyed by its lease token.

A claim is what one `claim` call handed this worker: a job id *and* a
token. The same job can come back to the same worker under a new token
(cancelled, retried, claimed again) while the first handler still runs,
so every lookup is by token, never by job id.

    running ──handler ends──▶ settling ──database answers──▶ completed | failed | released
       │                         │
       └──────── lost ◀──────────┘  (renewal refused or lease could have expired while running;
                                      outcome refused as stale; delivery impossible in time)

Only a `running` claim is given up by renewal or the watchdog. A
`settling` claim's outcome is queued or in flight, and the database's
answer decides it; it is dropped only when that answer cannot be had
before its lease could have expired.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import logging
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from taskboard import sql
from taskboard.context import BaseContext
from taskboard.events import EventHook, JobEvent, emit
from taskboard.tasks import Task

log = logging.getLogger("taskboard.worker")


def wall_clock() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class State(enum.Enum):
    RUNNING = "running"  # its handler runs
    SETTLING = "settling"  # its outcome is queued or in flight: the database's answer decides
    COMPLETED = "completed"  # complete answered true
    FAILED = "failed"  # fail answered queued or dead
    RELEASED = "released"  # release answered (true or false)
    LOST = "lost"  # given up, or its outcome refused as stale: never completed or failed by us


TERMINAL = frozenset({State.COMPLETED, State.FAILED, State.RELEASED, State.LOST})


@dataclass(eq=False)
class Outcome:
    """What the database must be told about a claim whose handler ended."""

    kind: str  # "complete", "fail" or "release"
    value: str | None = None  # result JSON for complete, error text for fail
    # Seconds: release's delay (None: 0), or fail's retry_in (None: the database's backoff).
    delay: float | None = None
    retry: bool = True  # fail: False makes the job dead at once (schema 0.3.0 on)
    traceback: str | None = None  # fail: the handler's formatted traceback, bounded


@dataclass(eq=False)
class Held:
    """One claim this worker holds, from `claim` until its outcome is settled."""

    claimed: sql.Claimed
    task: Task | None
    ctx: BaseContext
    safe_until: float  # monotonic: the lease cannot have expired before this
    state: State = State.RUNNING
    outcome: Outcome | None = None
    runner: asyncio.Task[None] | None = None
    in_flight: bool = False  # its outcome was sent and the answer is awaited
    retry_at: float = 0.0  # monotonic: when a failed send may be tried again
    failures: int = 0  # sends of its outcome that raised
    sent_at: dt.datetime | None = None  # wall clock: when its claim, then its outcome, was sent
    span: Any = None  # the attempt's tracing span, while its handler runs (taskboard.tracing)
    exception: BaseException | None = None  # what the handler raised, when it failed

    @property
    def job_id(self) -> int:
        return self.claimed.job_id

    @property
    def token(self) -> uuid.UUID:
        return self.claimed.token

    @property
    def log_extra(self) -> dict[str, Any]:
        return {
            "job_id": self.claimed.job_id,
            "attempt": self.claimed.attempt,
            "queue": self.claimed.queue,
            "task": self.claimed.task,
        }


def unique_jobs(items: Sequence[Held]) -> tuple[list[Held], list[Held]]:
    """Split `items` into a batch with each job id once, and the rest.

    One job can be held under two tokens (a stale claim and a new one);
    complete_many answers per job id, so they travel in separate batches.
    """
    batch: list[Held] = []
    rest: list[Held] = []
    seen: set[int] = set()
    for held in items:
        (rest if held.job_id in seen else batch).append(held)
        seen.add(held.job_id)
    return batch, rest


@dataclass
class Counters:
    """What this worker did, as the database answered it."""

    claimed: int = 0
    succeeded: int = 0
    failed: int = 0  # failed attempts queued again
    dead: int = 0  # failed attempts with none left
    lost: int = 0  # given up: renewal refused or the lease could have expired
    stale: int = 0  # complete/fail refused: the token was no longer current
    released: int = 0

    def line(self) -> str:
        return " ".join(f"{k}={v}" for k, v in vars(self).items())


@dataclass
class Ledger:
    """Every claim this worker holds, and the only place that moves one between states."""

    worker: str
    hooks: Sequence[EventHook] = ()
    counts: Counters = field(default_factory=Counters)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # a claim ended or settled
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # control has work to do
    _held: dict[uuid.UUID, Held] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._held)

    def __iter__(self) -> Iterator[Held]:
        return iter(list(self._held.values()))

    def get(self, token: uuid.UUID) -> Held | None:
        return self._held.get(token)

    def holds(self, held: Held) -> bool:
        return self._held.get(held.token) is held

    def in_state(self, *states: State) -> list[Held]:
        return [h for h in self._held.values() if h.state in states]

    def outbox(self) -> list[Held]:
        """Settling claims whose outcome waits to be sent, oldest first."""
        return [h for h in self._held.values() if h.state is State.SETTLING and h.outcome]

    # -- transitions ----------------------------------------------------------------

    def add(self, held: Held) -> None:
        self._held[held.token] = held
        self.counts.claimed += 1
        self.event(held, "claimed", claimed=held.claimed, sent_at=held.sent_at)

    def settle(self, held: Held, outcome: Outcome | None) -> bool:
        """running → settling with `outcome` queued for control (None: the caller sends it).

        False, and nothing changes, when the claim is no longer running.
        """
        if held.state is not State.RUNNING or not self.holds(held):
            return False
        held.state = State.SETTLING
        held.outcome = outcome
        kind = None if outcome is None else outcome.kind
        error = outcome.value if outcome is not None and outcome.kind == "fail" else None
        self.event(held, "finished", outcome=kind or "complete", error=error)
        if outcome is not None:
            self.wake.set()
        return True

    def resolve(self, held: Held, state: State, answer: Any = None) -> None:
        """settling → a final state, as the database answered."""
        if held.state in TERMINAL:
            return
        held.state = state
        self._drop(held)
        outcome = held.outcome.kind if held.outcome is not None else "complete"
        if state is State.COMPLETED:
            self.counts.succeeded += 1
        elif state is State.RELEASED:
            if answer:
                self.counts.released += 1
            self.event(held, "released", outcome=outcome, answer=answer, sent_at=held.sent_at)
            return
        elif state is State.FAILED:
            if answer == "dead":
                self.counts.dead += 1
                log.warning(
                    "job %s is dead: %s",
                    held.job_id,
                    held.outcome.value if held.outcome else "",
                    extra=held.log_extra,
                )
            else:
                self.counts.failed += 1
        elif state is State.LOST:
            # The database refused the outcome: this token no longer holds the job.
            self.counts.stale += 1
            log.warning(
                "%s of job %s (attempt %s) refused: this worker no longer holds it; "
                "not reported as done",
                outcome,
                held.job_id,
                held.claimed.attempt,
                extra=held.log_extra,
            )
        self.event(held, "settled", outcome=outcome, answer=answer, sent_at=held.sent_at)

    def lose(self, held: Held, why: str, *, settling_too: bool = False) -> bool:
        """Give the claim up: never complete or fail it; cancel its handler.

        Only a running claim is given up, or with `settling_too` a settling
        one whose outcome is not in flight. Returns whether it was.
        """
        if not self.holds(held):
            return False
        if held.state is State.SETTLING:
            if not settling_too or held.in_flight:
                return False
        elif held.state is not State.RUNNING:
            return False
        held.state = State.LOST
        held.ctx.mark_lost()
        self.counts.lost += 1
        log.warning(
            "lost job %s (attempt %s): %s",
            held.job_id,
            held.claimed.attempt,
            why,
            extra=held.log_extra,
        )
        if held.runner is not None and not held.runner.done():
            held.runner.cancel()  # a transactional handler's connection rolls back as it unwinds
        self._drop(held)
        self.event(held, "lost", error=why)
        return True

    def release_at_exit(self, held: Held) -> None:
        """running → settling with a release: shutdown hands back what is still running."""
        if held.state is not State.RUNNING or not self.holds(held):
            return
        held.ctx.mark_lost()  # its handler's outcome no longer counts
        if held.runner is not None and not held.runner.done():
            held.runner.cancel()
        held.state = State.SETTLING
        held.outcome = Outcome("release")
        self.event(held, "finished", outcome="release")
        self.wake.set()

    def _drop(self, held: Held) -> None:
        if self.holds(held):
            del self._held[held.token]
        self.changed.set()

    # -- events ---------------------------------------------------------------------

    def sending(self, held: Held, outcome: str, at: dt.datetime | None = None) -> None:
        """Note that the claim's outcome is about to be sent (`at`, now by default)."""
        held.in_flight = True
        held.sent_at = at or wall_clock()
        self.event(held, "sending", outcome=outcome)

    def event(self, held: Held, kind: str, **fields: Any) -> None:
        if not self.hooks:
            return
        emit(
            self.hooks,
            JobEvent(
                kind=kind,
                job_id=held.job_id,
                token=held.token,
                attempt=held.claimed.attempt,
                task=held.claimed.task,
                worker=self.worker,
                queue=held.claimed.queue,
                at=wall_clock(),
                **fields,
            ),
        )
