"""Endings: what a handler's ending becomes — the outcome the database is told.

A return value completes the job (with a note instead of a result that
cannot be stored); `Snooze` releases it; `Retry`, `Abort`, a timeout and
any other exception fail the attempt, with the task's retry policy's
delay where one applies. Nothing here raises on a handler's behalf.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from taskboard.errors import TaskError
from taskboard.retries import Abort, Retry, Snooze, delay_seconds
from taskboard.sql.worker import Queries
from taskboard.worker.held import Held
from taskboard.worker.outcomes import (
    Fail,
    Outcome,
    Release,
    ResultNotStored,
    describe,
    encode_result,
    format_traceback,
    not_stored,
)

log = logging.getLogger("taskboard.worker")


class HandlerTimeout(TaskError):
    """A handler ran past its task's timeout."""


async def bounded(awaitable: Awaitable[Any], timeout: float | None, task: str) -> Any:
    """Await `awaitable`, cancelling it after `timeout` seconds with HandlerTimeout.

    A TimeoutError the handler raises itself stays what it is.
    """
    if timeout is None:
        return await awaitable
    try:
        async with asyncio.timeout(timeout) as scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise HandlerTimeout(f"task {task!r} ran past its timeout of {timeout:g}s") from None
        raise


class Endings:
    """Turns the way a handler ended into its outcome."""

    def __init__(self, queries: Queries) -> None:
        self.queries = queries

    def failure(self, held: Held, exc: BaseException) -> Outcome:
        """The outcome of a handler that raised `exc`.

        Snooze hands the job back (no attempt used); Abort fails it for good;
        Retry fails the attempt
        with its own delay, else the task's policy's; any other exception
        fails the attempt with the policy's delay (None: the database's).
        Every failure but a timeout carries the traceback.
        """
        if not isinstance(exc, Snooze):
            held.exception = exc
        if isinstance(exc, Snooze):
            log.info("job %s snoozed for %gs", held.job_id, exc.seconds, extra=held.log_extra)
            return Release(exc.seconds)
        if isinstance(exc, HandlerTimeout):
            held.ctx.mark_lost()  # tells an abandoned sync handler its outcome no longer counts
            log.warning("job %s: %s", held.job_id, describe(exc), extra=held.log_extra)
            return Fail(
                f"TimeoutError: {describe(exc).split(': ', 1)[-1]}",
                retry_in=self.policy_delay(held, exc),
            )
        error, traceback = describe(exc), format_traceback(exc)
        if isinstance(exc, Retry):
            log.info("job %s: %s", held.job_id, error, extra=held.log_extra)
            delay = exc.after if exc.after is not None else self.policy_delay(held, exc)
            return Fail(error, retry_in=delay, traceback=traceback)
        log.warning("job %s failed", held.job_id, exc_info=exc, extra=held.log_extra)
        if isinstance(exc, Abort):
            return Fail(error, retry=False, traceback=traceback)
        return Fail(error, retry_in=self.policy_delay(held, exc), traceback=traceback)

    def policy_delay(self, held: Held, exc: BaseException) -> float | None:
        """The task's retry policy's delay after this attempt; None for the database's backoff.

        A policy that raises or answers what fail cannot take is logged, and
        the database's backoff applies.
        """
        policy = held.task.retry if held.task is not None else None
        if policy is None:
            return None
        try:
            delay = policy(held.claimed.attempt, exc)
            if delay is None:
                return None
            return delay_seconds("the delay", delay, zero_allowed=False)
        except BaseException as problem:  # noqa: BLE001 - a policy must not lose the outcome
            # nor stop the worker, whatever it raises (SystemExit included).
            log.warning(
                "job %s: the retry policy of task %r failed (%s); the database's backoff applies",
                held.job_id,
                held.claimed.task,
                describe(problem),
                extra=held.log_extra,
            )
            return None

    @staticmethod
    def result_json(held: Held, result: Any) -> str | None:
        """The result as JSON text the database stores, or a note of why it is not stored."""
        try:
            return encode_result(result)
        except ResultNotStored as exc:
            log.warning(
                "job %s succeeded but its result is not stored: %s",
                held.job_id,
                exc,
                extra=held.log_extra,
            )
            return not_stored(str(exc))
