"""What a handler receives as `ctx`: the job, its lease, and the holder check."""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

import psycopg

from taskboard.retries import Snooze

HolderCheck = Callable[[], Coroutine[Any, Any, bool]]
HOLDER_CHECK_TIMEOUT_SECONDS = 30.0


class BaseContext:
    """The job a handler runs and the lease it runs under.

    `lost` turns true when this worker no longer holds the job (renewal
    refused, or no successful renewal before the lease could have expired):
    from then on the worker will neither complete nor fail it.
    `idempotency_key` is the same for every attempt of the job and unique
    across databases: pass it to external APIs that deduplicate by key.
    `fence` strictly increases with every claim of the job: a store that
    can compare-and-set refuses a write whose fence is lower than one it
    has seen, which shuts out a stalled holder the database replaced.
    """

    def __init__(
        self,
        *,
        job_id: int,
        attempt: int,
        token: uuid.UUID,
        payload: Any,
        task: str,
        idempotency_key: uuid.UUID,
        check: HolderCheck,
        fence: int | None = None,
    ) -> None:
        self.job_id = job_id
        self.attempt = attempt
        self.token = token
        self.payload = payload
        self.task = task
        self.idempotency_key = idempotency_key
        self.fence = fence
        self.conn: psycopg.AsyncConnection[Any] | None = None
        self._check = check
        # Set once, by the worker's loop; read by the handler, in any thread.
        self._lost = False

    @property
    def lost(self) -> bool:
        return self._lost

    def mark_lost(self) -> None:
        self._lost = True

    def snooze(self, seconds: float) -> NoReturn:
        """Stop the handler here and hand the job back for `seconds`; no attempt is used.

        Raises Snooze, which the worker turns into `release(job_id, token,
        delay)`: the job is queued again, runnable `seconds` later by the
        database clock, and its next claim has the same attempt number. Works
        the same in sync and async handlers (a transactional handler's
        writes roll back). InvalidArgument for a negative delay or one over
        12 hours.
        """
        raise Snooze(seconds)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} job_id={self.job_id} attempt={self.attempt} "
            f"task={self.task!r} fence={self.fence}>"
        )


class AsyncContext(BaseContext):
    """`ctx` of an async handler."""

    async def still_holder(self) -> bool:
        """Ask the database whether this worker still holds the job with a live lease.

        Call it right before an external effect. False when the job was lost,
        reclaimed, cancelled or its lease expired, or when the database
        cannot be asked. It narrows the window for a duplicate effect; it
        cannot close it.
        """
        if self.lost:
            return False
        return await self._check()


class SyncContext(BaseContext):
    """`ctx` of a sync handler, which runs in a thread of its own."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._loop = loop

    def still_holder(self) -> bool:
        """Ask the database whether this worker still holds the job with a live lease.

        Blocks the handler's thread while the worker's loop asks. See
        AsyncContext.still_holder.
        """
        if self.lost:
            return False
        asked = asyncio.run_coroutine_threadsafe(self._check(), self._loop)
        try:
            return asked.result(timeout=HOLDER_CHECK_TIMEOUT_SECONDS)
        except (TimeoutError, concurrent.futures.CancelledError):
            asked.cancel()
            return False
