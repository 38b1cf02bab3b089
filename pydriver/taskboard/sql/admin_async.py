"""Queue control and managing jobs (the admin role): pause, resume, set_queue_limit,
set_queue_discard, set_key_limit, set_rate_limit, get_job, find_jobs, cancel, retry, prune and remove_schedule.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from taskboard.sql.loaders import READABLE_LOADERS, readable
from taskboard.sql.session_async import avalue

# -- queue control (the admin role) --------------------------------------------

PAUSE = "SELECT taskboard.pause(queue => %(queue)s)"
RESUME = "SELECT taskboard.resume(queue => %(queue)s)"
SET_QUEUE_LIMIT = (
    "SELECT taskboard.set_queue_limit(queue => %(queue)s, max_running => %(max_running)s)"
)
SET_QUEUE_DISCARD = "SELECT taskboard.set_queue_discard(queue => %(queue)s, discard => %(discard)s)"
SET_KEY_LIMIT = (
    "SELECT taskboard.set_key_limit("
    "queue => %(queue)s, max_running_per_key => %(max_running_per_key)s)"
)
SET_RATE_LIMIT = (
    "SELECT taskboard.set_rate_limit("
    "queue => %(queue)s, starts => %(starts)s, per => %(per)s, by_key => %(by_key)s)"
)


async def achanged(conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any]) -> bool:
    """Whether the call `query` says it changed something."""
    return bool(await avalue(conn, query, params))


async def apause(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call paused the queue of `params` (queue_params)."""
    return await achanged(conn, PAUSE, params)


async def aresume(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call resumed the queue of `params` (queue_params)."""
    return await achanged(conn, RESUME, params)


async def aset_queue_limit(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the limit (queue_limit_params)."""
    return await achanged(conn, SET_QUEUE_LIMIT, params)


async def aset_queue_discard(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed whether the queue discards (queue_discard_params)."""
    return await achanged(conn, SET_QUEUE_DISCARD, params)


async def aset_key_limit(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the key limit (key_limit_params)."""
    return await achanged(conn, SET_KEY_LIMIT, params)


async def aset_rate_limit(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the rate limit (rate_limit_params)."""
    return await achanged(conn, SET_RATE_LIMIT, params)


# -- managing jobs ---------------------------------------------------------------

FINISHED_STATES = ("succeeded", "dead", "cancelled")


@dataclass(frozen=True, slots=True)
class JobInfo:
    """One taskboard.job_info row: what a person may see of a job, never its token.

    `errors` lists each failed attempt as {error, attempt, worker, at} (and a
    `traceback` where the worker sent one). `started_at` is when the last
    claim started the job; None before it was claimed. `payload` is what the
    job was enqueued with and `fence` the number of its latest claim (0 before
    the first). `concurrency_key` is the key it was enqueued with, and
    `waiting_for` the ids a waiting job still waits for (None in any other
    state); both None on schemas of 0.6.0 and older.
    """

    job_id: int
    queue: str
    task: str
    state: str
    attempt: int
    max_attempts: int
    priority: int
    run_at: dt.datetime
    created_at: dt.datetime
    finished_at: dt.datetime | None
    result: Any
    errors: list[dict[str, Any]]
    started_at: dt.datetime | None = None
    payload: Any = None
    fence: int | None = None
    concurrency_key: str | None = None
    waiting_for: list[int] | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    def as_json(self) -> dict[str, Any]:
        """The job as JSON-ready values: times in ISO 8601."""
        return {
            name: value.isoformat() if isinstance(value, dt.datetime) else value
            for name, value in (
                (field, getattr(self, field)) for field in self.__dataclass_fields__
            )
        }


def job_info(row: Mapping[str, Any]) -> JobInfo | None:
    """A JobInfo from a job_info row read by name; None for get_job's row of NULLs."""
    if row["job_id"] is None:
        return None
    return JobInfo(
        job_id=row["job_id"],
        queue=row["queue"],
        task=row["task"],
        state=row["state"],
        attempt=row["attempt"],
        max_attempts=row["max_attempts"],
        priority=row["priority"],
        run_at=row["run_at"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        result=row["result"],
        errors=list(row["errors"] or []),
        started_at=row.get("started_at"),
        payload=row.get("payload"),
        fence=row.get("fence"),
        concurrency_key=row.get("concurrency_key"),
        waiting_for=None if row.get("waiting_for") is None else list(row["waiting_for"]),
    )


def _default_loaders(cur: psycopg.Cursor[Any] | psycopg.AsyncCursor[Any]) -> None:
    """Decode json, jsonb and timestamptz on `cur` as the reads for people do (see
    taskboard.sql.loaders): a time out of Python's range is an UnreadableTime."""
    readable(cur)


DEFAULT_LOADERS = READABLE_LOADERS


GET_JOB = "SELECT * FROM taskboard.get_job(job_id => %(job_id)s)"
FIND_JOBS = """
SELECT * FROM taskboard.find_jobs(queue => %(queue)s, state => %(state)s, task => %(task)s,
                                  after_id => %(after_id)s, max_rows => %(max_rows)s)
"""
CANCEL = "SELECT taskboard.cancel(job_id => %(job_id)s)"
RETRY = "SELECT taskboard.retry(job_id => %(job_id)s)"
PRUNE = "SELECT taskboard.prune(older_than => %(older_than)s, batch => %(batch)s)"


async def aget_job(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> JobInfo | None:
    """The job of `params` (job_params); None for an unknown id."""
    async with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        await cur.execute(GET_JOB, params)
        row = await cur.fetchone()
    return None if row is None else job_info(row)


async def afind_jobs(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[JobInfo]:
    """The jobs `params` (find_jobs_params) selects, newest first."""
    async with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        await cur.execute(FIND_JOBS, params)
        rows = await cur.fetchall()
    return [info for info in map(job_info, rows) if info is not None]


async def acancel(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call cancelled the job of `params` (job_params)."""
    return await achanged(conn, CANCEL, params)


async def aretry(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call queued the job of `params` (job_params) again."""
    return await achanged(conn, RETRY, params)


async def aprune_batch(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    """One prune call: how many finished jobs it deleted (at most params["batch"])."""
    return int(await avalue(conn, PRUNE, params) or 0)


async def aprune(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    """Batches of prune until one deletes fewer than a batch; how many in all."""
    total = 0
    while True:
        deleted = await aprune_batch(conn, params)
        total += deleted
        if deleted < params["batch"]:
            return total


# -- schedules (the admin role) -------------------------------------------------------

REMOVE_SCHEDULE = "SELECT taskboard.remove_schedule(schedule => %(schedule)s)"


async def aremove_schedule(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    """True when this call deleted the row of the schedule of `params` ({"schedule": name})."""
    return await achanged(conn, REMOVE_SCHEDULE, params)
