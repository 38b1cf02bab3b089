"""Held claims: one explicit state per claim, keyed by its lease token.

A claim is what one `claim` call handed this worker: a job id *and* a
token. The same job can come back to the same worker under a new token
(cancelled, retried, claimed again) while the first handler still runs,
so every lookup is by token, never by job id.

    running ──handler ends──▶ settling ──sent──▶ sending ──database answers──▶ completed | failed
       │                        ▲                 │  │                           | released | lost
       │                        └── send failed, ─┘  │
       │                            or a new outcome │
       └──────────────▶ lost ◀───────────────────────┘
         renewal refused, or the       whether it committed could not
         lease could have expired      be learnt before the lease could
                                       have expired

A transactional handler's claim goes from running straight to sending:
its complete is sent on its own connection, inside its transaction.

Only a `running` claim is given up by renewal or the watchdog. A
`settling` claim's outcome waits for the control connection, and a
`sending` claim's is on its way: the database's answer decides either
(an outcome refused as stale makes the claim lost). The Ledger is the
only place that moves a claim from one state to another.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from taskboard.context import BaseContext, HolderCheck
from taskboard.events import EventHook, JobEvent, emit
from taskboard.sql import worker as sql_worker
from taskboard.tasks import Task
from taskboard.worker.outcomes import Complete, Fail, Outcome, Release, describe

log = logging.getLogger("taskboard.worker")

# A send that raised is tried again after 0.2 s, 0.4 s, ... at most 5 s.
RETRY_FIRST_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0


def wall_clock() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class State(enum.Enum):
    RUNNING = "running"  # its handler runs
    SETTLING = "settling"  # its outcome waits to be sent: the database's answer decides
    SENDING = "sending"  # its outcome was sent and the answer is awaited
    COMPLETED = "completed"  # complete answered true
    FAILED = "failed"  # fail answered queued or dead
    RELEASED = "released"  # release answered (true or false)
    LOST = "lost"  # given up, or its outcome refused as stale: never completed or failed by us


@dataclass(eq=False)
class Held:
    """One claim this worker holds, from `claim` until its outcome is settled.

    `state` and `outcome` change only through the Ledger's transitions.
    """

    claimed: sql_worker.Claimed
    task: Task | None
    ctx: BaseContext
    safe_until: float  # monotonic: the lease cannot have expired before this
    state: State = State.RUNNING
    outcome: Outcome | None = None
    runner: asyncio.Future[None] | None = None  # its handler's task (a future in a claimer)
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


def context_of(
    row: sql_worker.Claimed, check: HolderCheck, make: Callable[..., BaseContext] = BaseContext
) -> BaseContext:
    """The `ctx` a handler of claim `row` gets (made by `make`), `check` its holder check."""
    return make(
        job_id=row.job_id,
        attempt=row.attempt,
        token=row.token,
        payload=row.payload,
        task=row.task,
        idempotency_key=row.idempotency_key,
        check=check,
        fence=row.fence,
    )


RELEASE_NOW = Release()  # shutdown's release: runnable again at once


def _name(outcome: Outcome | None) -> str:
    """The outcome's word for events and logs (a claim without one completes in its
    transaction)."""
    return "complete" if outcome is None else outcome.name


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
        """Settling claims: their outcome waits to be sent, oldest first."""
        return [h for h in self._held.values() if h.state is State.SETTLING]

    # -- transitions ----------------------------------------------------------------

    def add(self, held: Held) -> None:
        """→ running: the database handed us the claim; its handler is about to start."""
        self._held[held.token] = held
        self.counts.claimed += 1
        if self.hooks:
            self.event(held, "claimed", claimed=held.claimed, sent_at=held.sent_at)

    def settle(self, held: Held, outcome: Outcome) -> bool:
        """running → settling, with `outcome` for the control connection to send.

        False, and nothing changes, when the claim is no longer running.
        """
        if held.state is not State.RUNNING or not self.holds(held):
            return False
        held.state = State.SETTLING
        held.outcome = outcome
        self._finished(held, outcome)
        self.wake.set()
        return True

    def settle_in_transaction(self, held: Held, outcome: Outcome) -> bool:
        """running → sending: a transactional handler returned, and `outcome` goes to the
        database on its own connection, inside its transaction.

        False, and nothing changes, when the claim is no longer running.
        """
        if held.state is not State.RUNNING or not self.holds(held):
            return False
        held.state = State.SENDING
        held.outcome = outcome
        self._finished(held, outcome)
        return True

    def release_at_exit(self, held: Held) -> None:
        """running → settling with a release: shutdown hands back what is still running."""
        if held.state is not State.RUNNING or not self.holds(held):
            return
        held.ctx.mark_lost()  # its handler's outcome no longer counts
        if held.runner is not None and not held.runner.done():
            held.runner.cancel()
        held.state = State.SETTLING
        held.outcome = RELEASE_NOW
        self.event(held, "finished", outcome=Release.name)
        self.wake.set()

    def sending(self, held: Held, at: dt.datetime | None = None) -> bool:
        """settling → sending: its outcome is sent now (`at`, now by default).

        False, and nothing changes, when the claim is not settling (a claim leaves the
        ledger only in a final state).
        """
        if held.state is not State.SETTLING:
            return False
        held.state = State.SENDING
        held.sent_at = at or wall_clock()
        if self.hooks:
            self.event(held, "sending", outcome=_name(held.outcome))
        return True

    def send_failed(self, held: Held, exc: BaseException) -> None:
        """sending → settling: sending raised `exc`; it is sent again after a backoff.

        Whether it committed is unknown: complete, fail and release are
        fenced on the token and idempotent, so sending it again is safe.
        """
        if held.state is not State.SENDING:
            return
        held.state = State.SETTLING
        held.failures += 1
        error = describe(exc)
        self.event(held, "send_failed", outcome=_name(held.outcome), error=error)
        delay = min(RETRY_FIRST_SECONDS * 2 ** (held.failures - 1), RETRY_MAX_SECONDS)
        held.retry_at = time.monotonic() + delay
        log.warning(
            "job %s: sending its %s failed (%s); sending it again in %.1fs",
            held.job_id,
            _name(held.outcome),
            error,
            delay,
            extra=held.log_extra,
        )

    def requeue(self, held: Held) -> None:
        """sending → settling, due at once: the call carrying its outcome with others failed
        as a whole and committed nothing; it goes out on its own next."""
        if held.state is State.SENDING:
            held.state = State.SETTLING

    def amend(self, held: Held, outcome: Outcome) -> None:
        """settling or sending → settling, to send `outcome` instead: what was sent was
        refused as data the database cannot store, or did not commit."""
        if held.state not in (State.SETTLING, State.SENDING) or not self.holds(held):
            return
        held.state = State.SETTLING
        held.outcome = outcome
        self.wake.set()

    def resolve(self, held: Held, state: State, answer: Any = None) -> None:
        """sending → a final state, as the database answered."""
        if held.state is not State.SENDING:
            return
        held.state = state
        self._drop(held)
        if state is State.COMPLETED:
            self.counts.succeeded += 1
            if self.hooks:
                self.event(
                    held, "settled", outcome=Complete.name, answer=answer, sent_at=held.sent_at
                )
            return
        outcome = _name(held.outcome)
        if state is State.RELEASED:
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
                    held.outcome.error if isinstance(held.outcome, Fail) else "",
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

    def lose(self, held: Held, why: str) -> bool:
        """running → lost: give the claim up; never complete or fail it; cancel its handler.

        Returns whether it was given up: a claim that is not running is not
        (its outcome is decided, and the database's answer to it decides).
        """
        if held.state is not State.RUNNING or not self.holds(held):
            return False
        self._lost(held, why)
        return True

    def abandon(self, held: Held, why: str) -> bool:
        """sending → lost: whether its outcome committed cannot be learnt before its lease
        could have expired. Returns whether it was given up."""
        if held.state is not State.SENDING or not self.holds(held):
            return False
        self._lost(held, why)
        return True

    def _lost(self, held: Held, why: str) -> None:
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

    def _drop(self, held: Held) -> None:
        if self.holds(held):
            del self._held[held.token]
        self.changed.set()

    # -- events ---------------------------------------------------------------------

    def _finished(self, held: Held, outcome: Outcome) -> None:
        if self.hooks:
            error = outcome.error if isinstance(outcome, Fail) else None
            self.event(held, "finished", outcome=outcome.name, error=error)

    def note_sent(self, held: Held, at: dt.datetime | None = None) -> None:
        """Stamp when the claim's outcome was sent (`at`, now by default), and tell the
        hooks: it may commit even if the answer never arrives."""
        held.sent_at = at or wall_clock()
        if self.hooks:
            self.event(held, "sending", outcome=_name(held.outcome))

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
