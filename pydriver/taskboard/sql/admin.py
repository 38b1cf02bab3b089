# Generated from admin_async.py by dev/taskboard_dev/async_to_sync.py (make sync):
# edit admin_async.py, not this file.
"""Queue control and managing jobs (the admin role): pause, resume, set_queue_limit,
set_queue_discard, set_key_limit, set_rate_limit, get_job, find_jobs, cancel, retry, prune and remove_schedule.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from taskboard.sql.admin_async import (
    CANCEL,
    FIND_JOBS,
    GET_JOB,
    PAUSE,
    PRUNE,
    REMOVE_SCHEDULE,
    RESUME,
    RETRY,
    SET_KEY_LIMIT,
    SET_QUEUE_DISCARD,
    SET_QUEUE_LIMIT,
    SET_RATE_LIMIT,
    JobInfo,
    _default_loaders,
    job_info,
)
from taskboard.sql.session import value


def changed(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> bool:
    """Whether the call `query` says it changed something."""
    return bool(value(conn, query, params))


def pause(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call paused the queue of `params` (queue_params)."""
    return changed(conn, PAUSE, params)


def resume(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call resumed the queue of `params` (queue_params)."""
    return changed(conn, RESUME, params)


def set_queue_limit(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the limit (queue_limit_params)."""
    return changed(conn, SET_QUEUE_LIMIT, params)


def set_queue_discard(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed whether the queue discards (queue_discard_params)."""
    return changed(conn, SET_QUEUE_DISCARD, params)


def set_key_limit(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the key limit (key_limit_params)."""
    return changed(conn, SET_KEY_LIMIT, params)


def set_rate_limit(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call changed the rate limit (rate_limit_params)."""
    return changed(conn, SET_RATE_LIMIT, params)


def get_job(conn: psycopg.Connection[Any], params: dict[str, Any]) -> JobInfo | None:
    """The job of `params` (job_params); None for an unknown id."""
    with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        cur.execute(GET_JOB, params)
        row = cur.fetchone()
    return None if row is None else job_info(row)


def find_jobs(conn: psycopg.Connection[Any], params: dict[str, Any]) -> list[JobInfo]:
    """The jobs `params` (find_jobs_params) selects, newest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        cur.execute(FIND_JOBS, params)
        rows = cur.fetchall()
    return [info for info in map(job_info, rows) if info is not None]


def cancel(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call cancelled the job of `params` (job_params)."""
    return changed(conn, CANCEL, params)


def retry(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call queued the job of `params` (job_params) again."""
    return changed(conn, RETRY, params)


def prune_batch(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    """One prune call: how many finished jobs it deleted (at most params["batch"])."""
    return int(value(conn, PRUNE, params) or 0)


def prune(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    """Batches of prune until one deletes fewer than a batch; how many in all."""
    total = 0
    while True:
        deleted = prune_batch(conn, params)
        total += deleted
        if deleted < params["batch"]:
            return total


def remove_schedule(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    """True when this call deleted the row of the schedule of `params` ({"schedule": name})."""
    return changed(conn, REMOVE_SCHEDULE, params)
