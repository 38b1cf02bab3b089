"""Job admin: an app's reads of jobs, cancel, retry and prune."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg

from taskboard.calls import ADMIN_ROLE, Calls
from taskboard.sql import admin, admin_async, parameters
from taskboard.sql.admin_async import JobInfo

__all__ = ["JobAdmin"]

DEFAULT_PAGE = 50  # jobs per page of app.jobs
PRUNE_BATCH = 10_000  # jobs per prune call


class JobAdmin(Calls):
    """Look jobs up, list them, cancel or retry one, and prune finished ones."""

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    def get_job(
        self, job_id: int, *, conn: psycopg.Connection[Any] | None = None
    ) -> JobInfo | None:
        """The job as a person may see it (never its token); None for an unknown id."""
        return self._produce("get_job", admin.get_job, parameters.job_params(job_id), conn)

    def jobs(
        self,
        *,
        queue: str | None = None,
        state: str | None = None,
        task: str | None = None,
        after_id: int | None = None,
        limit: int = DEFAULT_PAGE,
        conn: psycopg.Connection[Any] | None = None,
    ) -> list[JobInfo]:
        """Jobs matching every filter given, newest first, at most `limit` (1..1000).

        The next page: pass the last job's id as `after_id`. Any Taskboard role
        may.
        """
        params = parameters.find_jobs_params(queue, state, task, after_id, limit)
        return self._produce("jobs", admin.find_jobs, params, conn)

    def cancel(self, job_id: int, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Cancel a waiting, queued or running job; its holder's later
        writes are refused, and the jobs waiting on it are cancelled too unless they were
        enqueued with on_dependency_failure="run". False for a finished or unknown job.
        Needs the admin role."""
        return self._produce(
            "cancel", admin.cancel, parameters.job_params(job_id), conn, role=ADMIN_ROLE
        )

    def retry(self, job_id: int, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Queue a dead or cancelled job again, its attempts reset: runnable now, or, when
        it was cancelled under a lease that has not run out, once that lease ends. False for
        any other state, an unknown job, or when its dedupe key is held by another unfinished
        job. Needs the admin role."""
        return self._produce(
            "retry", admin.retry, parameters.job_params(job_id), conn, role=ADMIN_ROLE
        )

    def prune(
        self,
        older_than: float | dt.timedelta,
        *,
        batch: int = PRUNE_BATCH,
        conn: psycopg.Connection[Any] | None = None,
    ) -> int:
        """Delete finished jobs that finished more than `older_than` (seconds or a
        timedelta) ago, `batch` at a time until none is left; how many in all. Needs the
        admin (or worker) role."""
        params = parameters.prune_params(older_than, batch)
        return self._produce("prune", admin.prune, params, conn, role=ADMIN_ROLE)

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    async def aget_job(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> JobInfo | None:
        """The job as a person may see it (never its token); None for an unknown id."""
        return await self._aproduce(
            "aget_job", admin_async.aget_job, parameters.job_params(job_id), conn
        )

    async def ajobs(
        self,
        *,
        queue: str | None = None,
        state: str | None = None,
        task: str | None = None,
        after_id: int | None = None,
        limit: int = DEFAULT_PAGE,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> list[JobInfo]:
        """Jobs matching every filter given, newest first, at most `limit` (1..1000).

        The next page: pass the last job's id as `after_id`. Any Taskboard role
        may.
        """
        params = parameters.find_jobs_params(queue, state, task, after_id, limit)
        return await self._aproduce("ajobs", admin_async.afind_jobs, params, conn)

    async def acancel(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Cancel a waiting, queued or running job; its holder's later
        writes are refused, and the jobs waiting on it are cancelled too unless they were
        enqueued with on_dependency_failure="run". False for a finished or unknown job.
        Needs the admin role."""
        return await self._aproduce(
            "acancel", admin_async.acancel, parameters.job_params(job_id), conn, role=ADMIN_ROLE
        )

    async def aretry(
        self, job_id: int, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Queue a dead or cancelled job again, its attempts reset: runnable now, or, when
        it was cancelled under a lease that has not run out, once that lease ends. False for
        any other state, an unknown job, or when its dedupe key is held by another unfinished
        job. Needs the admin role."""
        return await self._aproduce(
            "aretry", admin_async.aretry, parameters.job_params(job_id), conn, role=ADMIN_ROLE
        )

    async def aprune(
        self,
        older_than: float | dt.timedelta,
        *,
        batch: int = PRUNE_BATCH,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> int:
        """Delete finished jobs that finished more than `older_than` (seconds or a
        timedelta) ago, `batch` at a time until none is left; how many in all. Needs the
        admin (or worker) role."""
        params = parameters.prune_params(older_than, batch)
        return await self._aproduce("aprune", admin_async.aprune, params, conn, role=ADMIN_ROLE)

    # -- end of the asyncio calls
