"""Helpers for testing an application that uses Taskboard, against a real database.

`run_until_empty(app)` (or `await arun_until_empty(app)`) runs the app's
real worker until its queues are empty and returns each job's outcome;
`enqueued_jobs(...)` and `assert_enqueued(...)` look at what is queued. The
pytest plugin (`taskboard.testing.plugin`, entry point ``taskboard``) gives
each test a migrated throwaway database: fixture `taskboard_database`.
Everything runs the SQL functions a deployed Taskboard runs, so a test
exercises the same leases and fences.
"""

from __future__ import annotations

from taskboard.testing.inline import (
    DEFAULT_TIMEOUT_SECONDS,
    JobOutcome,
    StillRunnable,
    arun_until_empty,
    assert_enqueued,
    enqueued_jobs,
    run_until_empty,
)

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "JobOutcome",
    "StillRunnable",
    "arun_until_empty",
    "assert_enqueued",
    "enqueued_jobs",
    "run_until_empty",
]
