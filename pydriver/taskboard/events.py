"""The per-job event hook: what happened to each claim a worker held, as it happened.

A hook is a callable taking one JobEvent. The worker calls every hook on
its event loop, in order, right when the event happens; a hook must be
quick and must not block. An exception a hook raises is logged and
ignored: observing the worker never changes what it does.

The kinds of event are listed on JobEvent.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobEvent:
    """One thing that happened to one claim (job id and token) of this worker.

    Kinds, in the order a claim meets them:

    - ``claimed``: the database handed this worker the job (``claimed`` holds the row).
      Events that carry a database's answer have ``sent_at``, the wall time the
      call was sent.
    - ``started``: its handler began (or, for a task this worker does not know,
      the worker is about to hand the job back).
    - ``renewed``: one renewal answer; ``answer`` is the new deadline, or None
      when renewal was refused.
    - ``holder_checked``: ``still_holder()`` asked the database; ``answer`` is
      lease_state's answer.
    - ``finished``: the handler ended; ``outcome`` is what the worker will tell
      the database (``complete``, ``fail`` or ``release``) and ``error`` the
      error text of a failure.
    - ``sending``: the outcome is about to be sent (it may commit even if the
      answer never arrives).
    - ``send_failed``: sending it raised; ``error`` says why; whether it
      committed is unknown until it is sent again or resolved.
    - ``settled``: the database answered a complete or fail: ``answer`` is
      True/False for complete, the new state or None for fail.
    - ``released``: the database answered a release (``answer`` True/False).
    - ``lost``: the worker gave the claim up (``error`` says why) and will
      never complete or fail it.
    """

    kind: str
    job_id: int
    token: uuid.UUID
    attempt: int
    task: str
    worker: str
    queue: str
    at: dt.datetime  # wall clock, for logs and histories; never compared with the database's
    sent_at: dt.datetime | None = None  # wall clock: when the call this answers was sent
    outcome: str | None = None
    answer: Any = None
    error: str | None = None
    claimed: Any = None  # the taskboard.sql.worker.Claimed row, on "claimed"


EventHook = Callable[[JobEvent], None]


def emit(hooks: Sequence[EventHook], event: JobEvent) -> None:
    """Call every hook with `event`; a hook that raises is logged, never propagated."""
    for hook in hooks:
        try:
            hook(event)
        except Exception:
            log.exception("event hook %r failed on %s of job %s", hook, event.kind, event.job_id)
