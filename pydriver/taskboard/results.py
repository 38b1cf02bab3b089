"""Results: an app's wait for a job's outcome."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from taskboard.errors import JobCancelled, JobFailed, JobNotFound
from taskboard.job_admin import JobAdmin
from taskboard.sql.admin_async import JobInfo

__all__ = ["Results"]

# app.result looks at an unfinished job after these pauses, doubling.
RESULT_FIRST_PAUSE = 0.05
RESULT_MAX_PAUSE = 1.0


class Results(JobAdmin):
    """Wait for a job to finish, and return its result or raise why it has none."""

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    def result(self, job_id: int, *, timeout: float | None = None) -> Any:
        """Wait until the job is finished and return its result.

        Raises JobFailed when it is dead, JobCancelled when it was cancelled,
        JobNotFound for an unknown id, and TimeoutError when it is not
        finished within `timeout` seconds (None: wait as long as it takes).
        Asks get_job, less often the longer it waits (at most every second).
        """
        waiting = _Waiting(timeout)
        while True:
            job = self.get_job(job_id)
            if (done := _outcome(job_id, job)) is not None:
                return done.value
            time.sleep(waiting.next_pause(job_id))

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    async def aresult(self, job_id: int, *, timeout: float | None = None) -> Any:
        """Wait until the job is finished and return its result.

        Raises JobFailed when it is dead, JobCancelled when it was cancelled,
        JobNotFound for an unknown id, and TimeoutError when it is not
        finished within `timeout` seconds (None: wait as long as it takes).
        Asks aget_job, less often the longer it waits (at most every second).
        """
        waiting = _Waiting(timeout)
        while True:
            job = await self.aget_job(job_id)
            if (done := _outcome(job_id, job)) is not None:
                return done.value
            await asyncio.sleep(waiting.next_pause(job_id))

    # -- end of the asyncio calls


@dataclass(frozen=True, slots=True)
class _Done:
    value: Any


def _outcome(job_id: int, job: JobInfo | None) -> _Done | None:
    """The result of a succeeded job; None while it is unfinished; raises for the rest."""
    if job is None:
        raise JobNotFound(job_id)
    if job.state == "succeeded":
        return _Done(job.result)
    if job.state == "dead":
        raise JobFailed(job_id, job.errors)
    if job.state == "cancelled":
        raise JobCancelled(job_id)
    return None


class _Waiting:
    """The pauses between looks at an unfinished job, and the deadline."""

    def __init__(self, timeout: float | None) -> None:
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout >= 0):
            raise ValueError(f"timeout must be None or seconds >= 0, got {timeout!r}")
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.pause = RESULT_FIRST_PAUSE

    def next_pause(self, job_id: int) -> float:
        pause, self.pause = self.pause, min(self.pause * 2, RESULT_MAX_PAUSE)
        if self.deadline is None:
            return pause
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"job {job_id} did not finish in time")
        return min(pause, left)
