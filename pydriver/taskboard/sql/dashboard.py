"""The reads of `taskboard status` and `schedules`, the metrics and the dashboard, each
decoding times with taskboard.sql.loaders (one out of Python's range does not fail them)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
from psycopg.rows import dict_row

from taskboard.sql.loaders import readable

# Every column the schema has: paused and max_running arrived in 0.3.0.
QUEUE_STATS = "SELECT * FROM taskboard.queue_stats ORDER BY queue, state"


def queue_stats(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """queue_stats' rows by column name."""
    with conn.cursor(row_factory=dict_row) as cur:
        readable(cur)
        return list(cur.execute(QUEUE_STATS).fetchall())


# The same rows, each with the database's clock as it read them (for ages).
QUEUE_STATS_READ_AT = """
SELECT s.*, pg_catalog.clock_timestamp() AS read_at
  FROM taskboard.queue_stats AS s
 ORDER BY s.queue, s.state
"""


def queue_stats_read_at(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """queue_stats' rows by column name, each with `read_at`, the database's clock."""
    with conn.cursor(row_factory=dict_row) as cur:
        readable(cur)
        return list(cur.execute(QUEUE_STATS_READ_AT).fetchall())


# -- periodic jobs -----------------------------------------------------------------

# Every column: task and queue from schema 0.4.5 on.
SCHEDULES = """
SELECT *
  FROM taskboard.schedules
 ORDER BY schedule
"""


def schedules(conn: psycopg.Connection[Any]) -> list[dict[str, Any]] | None:
    """The rows of taskboard.schedules by column name (`task` and `queue` from schema 0.4.5
    on); None when the schema has no such view."""
    row = conn.execute("SELECT to_regclass('taskboard.schedules') IS NOT NULL").fetchone()
    if not (row and row[0]):
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        readable(cur)
        return list(cur.execute(SCHEDULES).fetchall())


# -- the dashboard's reads --------------------------------------------------------

# Each queue now, with the database's clock as it read them (for ages).
QUEUE_OVERVIEW = """
SELECT o.queue, o.queued, o.running, o.runnable, o.oldest_runnable_at, o.dead, o.cancelled,
       o.succeeded_recent, o.dead_recent, o.cancelled_recent, o.paused, o.max_running,
       o.max_running_per_key, o.rate_starts, o.rate_per, o.rate_by_key, o.window_starts,
       o.waiting, pg_catalog.clock_timestamp() AS read_at
  FROM taskboard.queue_overview(recent => %(recent)s) AS o
"""
JOB_ACTIVITY = "SELECT * FROM taskboard.job_activity(recent => %(recent)s)"
# One line a job for the job list: never the payload, the result or the errors.
FIND_JOBS_SUMMARY = """
SELECT * FROM taskboard.find_jobs_summary(queue => %(queue)s, state => %(state)s,
                                          task => %(task)s, after_id => %(after_id)s,
                                          max_rows => %(max_rows)s)
"""
# The schedules with the state of each one's last job.
SCHEDULES_WITH_LAST_JOB = """
SELECT s.schedule, s.last_slot, s.last_job_id,
       -- The task and queue its latest slot was taken for.
       s.task AS slot_task,
       s.queue AS slot_queue,
       CASE WHEN s.last_job_id IS NOT NULL
            THEN (taskboard.get_job(job_id => s.last_job_id)).state END AS last_job_state
  FROM taskboard.schedules AS s
 ORDER BY s.schedule
"""
# What this login may do of what the dashboard offers (the admin role's grants).
ALLOWED_ACTIONS = """
SELECT pg_catalog.has_function_privilege('taskboard.cancel(bigint)', 'EXECUTE') AS cancel,
       pg_catalog.has_function_privilege('taskboard.retry(bigint)', 'EXECUTE') AS retry,
       pg_catalog.has_function_privilege('taskboard.pause(text)', 'EXECUTE') AS pause,
       pg_catalog.has_function_privilege('taskboard.resume(text)', 'EXECUTE') AS resume,
       pg_catalog.has_function_privilege('taskboard.set_queue_limit(text, integer)', 'EXECUTE')
           AS set_queue_limit
"""

# A job's history (schema 0.4.5 and later, the admin role's), oldest first.
JOB_HISTORY = "SELECT * FROM taskboard.job_history(job_id => %(job_id)s)"
# Whether this login may read it: false too when the schema has no job_history.
MAY_READ_JOB_HISTORY = """
SELECT coalesce(pg_catalog.has_function_privilege(
           pg_catalog.to_regprocedure('taskboard.job_history(bigint)'), 'EXECUTE'), false) AS allowed
"""

# Who holds what (schema 0.4.5 and later, the admin role's), by worker.
WORKER_LEASES = "SELECT * FROM taskboard.worker_leases(max_rows => %(max_rows)s)"
MAY_READ_WORKER_LEASES = """
SELECT coalesce(pg_catalog.has_function_privilege(
           pg_catalog.to_regprocedure('taskboard.worker_leases(integer)'), 'EXECUTE'), false)
           AS allowed
"""


async def _arows(
    conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        readable(cur)
        await cur.execute(query, params)
        return list(await cur.fetchall())


async def aqueue_overview(
    conn: psycopg.AsyncConnection[Any],
    recent: dt.timedelta,
) -> list[dict[str, Any]]:
    """queue_overview's rows by column name, each with `read_at`, the database's clock."""
    return await _arows(conn, QUEUE_OVERVIEW, {"recent": recent})


async def ajob_activity(
    conn: psycopg.AsyncConnection[Any], recent: dt.timedelta
) -> list[dict[str, Any]]:
    """job_activity's rows by column name: per minute and queue, oldest first."""
    return await _arows(conn, JOB_ACTIVITY, {"recent": recent})


async def afind_jobs_summary(
    conn: psycopg.AsyncConnection[Any], params: dict[str, Any]
) -> list[dict[str, Any]]:
    """The lines of the jobs `params` (find_jobs_params) selects, newest first, by column
    name: job_id, queue, task, state, attempt, max_attempts, priority, run_at, created_at,
    started_at, finished_at, failures and last_error; never a payload, result or errors."""
    return await _arows(conn, FIND_JOBS_SUMMARY, params)


async def aschedules(conn: psycopg.AsyncConnection[Any]) -> list[dict[str, Any]]:
    """taskboard.schedules with `last_job_state`, by column name."""
    return await _arows(conn, SCHEDULES_WITH_LAST_JOB)


async def aallowed_actions(conn: psycopg.AsyncConnection[Any]) -> dict[str, bool]:
    """For each action the dashboard offers, whether this login may take it."""
    rows = await _arows(conn, ALLOWED_ACTIONS)
    return {name: bool(value) for name, value in rows[0].items()}


async def ajob_history(
    conn: psycopg.AsyncConnection[Any], job_id: int
) -> list[dict[str, Any]] | None:
    """job_history's rows by column name, oldest first; None when this login may not read them."""
    allowed = await _arows(conn, MAY_READ_JOB_HISTORY)
    if not allowed[0]["allowed"]:
        return None
    return await _arows(conn, JOB_HISTORY, {"job_id": job_id})


async def aworker_leases(
    conn: psycopg.AsyncConnection[Any], max_rows: int
) -> list[dict[str, Any]] | None:
    """worker_leases' rows by column name; None when this login may not read them."""
    allowed = await _arows(conn, MAY_READ_WORKER_LEASES)
    if not allowed[0]["allowed"]:
        return None
    return await _arows(conn, WORKER_LEASES, {"max_rows": max_rows})
