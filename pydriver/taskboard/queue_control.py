"""Queue control: an app's pause, resume and limits, which need the admin role."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg

from taskboard.calls import ADMIN_ROLE, Calls
from taskboard.sql import admin, admin_async, parameters

__all__ = ["QueueControl"]


class QueueControl(Calls):
    """Pause and resume a queue, and set its queue, key and rate limits."""

    # -- generated sync calls: made from the asyncio calls below by make sync
    # (dev/taskboard_dev/async_to_sync.py); edit those, not these.

    def pause(self, queue: str, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Pause `queue`: from the next claim on, no worker takes a job from it, until
        `resume`. Its running jobs carry on, renew, complete and fail. True when this call
        paused it, False when it already was. Needs the admin role."""
        return self._produce(
            "pause", admin.pause, parameters.queue_params(queue), conn, role=ADMIN_ROLE
        )

    def resume(self, queue: str, *, conn: psycopg.Connection[Any] | None = None) -> bool:
        """Resume a paused `queue`; its workers are woken when a job is runnable. True when
        this call resumed it, False when it was not paused. Needs the admin role."""
        return self._produce(
            "resume", admin.resume, parameters.queue_params(queue), conn, role=ADMIN_ROLE
        )

    def set_queue_limit(
        self,
        queue: str,
        max_running: int | None,
        *,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """Never run more than `max_running` jobs of `queue` at once, across all workers
        (None: no limit). Jobs already running over a lowered limit carry on. True when
        this call changed the limit. Needs the admin role; InvalidArgument below 1."""
        params = parameters.queue_limit_params(queue, max_running)
        return self._produce(
            "set_queue_limit", admin.set_queue_limit, params, conn, role=ADMIN_ROLE
        )

    def set_queue_discard(
        self,
        queue: str,
        discard: bool,
        *,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """With `discard` True, an accepted completion of a job of `queue` deletes the job
        and its history instead of keeping it succeeded; False keeps jobs again (every
        queue's default). A job another job waits on, or one another transaction holds a
        lock on at that moment, is kept for prune. True when this call changed the
        setting. Needs the admin role."""
        params = parameters.queue_discard_params(queue, discard)
        return self._produce(
            "set_queue_discard", admin.set_queue_discard, params, conn, role=ADMIN_ROLE
        )

    def set_key_limit(
        self,
        queue: str,
        max_running_per_key: int | None,
        *,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """Never let more than `max_running_per_key` jobs of one concurrency key of `queue`
        hold a lease at once, across all workers (None: no key limit). A lease that expired
        counts until its job is reclaimed or finished; jobs of other keys and jobs without a
        key are still claimed. True when this call changed the limit. Needs the admin
        role; InvalidArgument below 1."""
        params = parameters.key_limit_params(queue, max_running_per_key)
        return self._produce("set_key_limit", admin.set_key_limit, params, conn, role=ADMIN_ROLE)

    def set_rate_limit(
        self,
        queue: str,
        starts: int | None,
        per: dt.timedelta | float | None,
        *,
        by_key: bool = False,
        conn: psycopg.Connection[Any] | None = None,
    ) -> bool:
        """From the next claim on, start at most `starts` jobs of `queue` in any window of
        length `per` (a timedelta, or seconds), on the database's clock, across all workers;
        a reclaim of an expired lease counts as a start. With `by_key`, each concurrency key
        gets `starts` per window of its own and jobs without a key are not limited. Jobs held
        back stay queued. `starts=None, per=None` removes the limit and forgets the queue's
        starts. True when this call changed the limit. Needs the admin role;
        InvalidArgument for starts outside 1..100000, or per not positive or longer
        than 31 days."""
        params = parameters.rate_limit_params(queue, starts, per, by_key)
        return self._produce("set_rate_limit", admin.set_rate_limit, params, conn, role=ADMIN_ROLE)

    # -- end of the generated sync calls

    # -- asyncio calls: the source of the generated sync calls above (make sync) ------

    async def apause(self, queue: str, *, conn: psycopg.AsyncConnection[Any] | None = None) -> bool:
        """Pause `queue`: from the next claim on, no worker takes a job from it, until
        `aresume`. Its running jobs carry on, renew, complete and fail. True when this call
        paused it, False when it already was. Needs the admin role."""
        return await self._aproduce(
            "apause", admin_async.apause, parameters.queue_params(queue), conn, role=ADMIN_ROLE
        )

    async def aresume(
        self, queue: str, *, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> bool:
        """Resume a paused `queue`; its workers are woken when a job is runnable. True when
        this call resumed it, False when it was not paused. Needs the admin role."""
        return await self._aproduce(
            "aresume", admin_async.aresume, parameters.queue_params(queue), conn, role=ADMIN_ROLE
        )

    async def aset_queue_limit(
        self,
        queue: str,
        max_running: int | None,
        *,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """Never run more than `max_running` jobs of `queue` at once, across all workers
        (None: no limit). Jobs already running over a lowered limit carry on. True when
        this call changed the limit. Needs the admin role; InvalidArgument below 1."""
        params = parameters.queue_limit_params(queue, max_running)
        return await self._aproduce(
            "aset_queue_limit", admin_async.aset_queue_limit, params, conn, role=ADMIN_ROLE
        )

    async def aset_queue_discard(
        self,
        queue: str,
        discard: bool,
        *,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """With `discard` True, an accepted completion of a job of `queue` deletes the job
        and its history instead of keeping it succeeded; False keeps jobs again (every
        queue's default). A job another job waits on, or one another transaction holds a
        lock on at that moment, is kept for prune. True when this call changed the
        setting. Needs the admin role."""
        params = parameters.queue_discard_params(queue, discard)
        return await self._aproduce(
            "aset_queue_discard", admin_async.aset_queue_discard, params, conn, role=ADMIN_ROLE
        )

    async def aset_key_limit(
        self,
        queue: str,
        max_running_per_key: int | None,
        *,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """Never let more than `max_running_per_key` jobs of one concurrency key of `queue`
        hold a lease at once, across all workers (None: no key limit). A lease that expired
        counts until its job is reclaimed or finished; jobs of other keys and jobs without a
        key are still claimed. True when this call changed the limit. Needs the admin
        role; InvalidArgument below 1."""
        params = parameters.key_limit_params(queue, max_running_per_key)
        return await self._aproduce(
            "aset_key_limit", admin_async.aset_key_limit, params, conn, role=ADMIN_ROLE
        )

    async def aset_rate_limit(
        self,
        queue: str,
        starts: int | None,
        per: dt.timedelta | float | None,
        *,
        by_key: bool = False,
        conn: psycopg.AsyncConnection[Any] | None = None,
    ) -> bool:
        """From the next claim on, start at most `starts` jobs of `queue` in any window of
        length `per` (a timedelta, or seconds), on the database's clock, across all workers;
        a reclaim of an expired lease counts as a start. With `by_key`, each concurrency key
        gets `starts` per window of its own and jobs without a key are not limited. Jobs held
        back stay queued. `starts=None, per=None` removes the limit and forgets the queue's
        starts. True when this call changed the limit. Needs the admin role;
        InvalidArgument for starts outside 1..100000, or per not positive or longer
        than 31 days."""
        params = parameters.rate_limit_params(queue, starts, per, by_key)
        return await self._aproduce(
            "aset_rate_limit", admin_async.aset_rate_limit, params, conn, role=ADMIN_ROLE
        )

    # -- end of the asyncio calls
