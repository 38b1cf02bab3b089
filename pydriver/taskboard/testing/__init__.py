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

import importlib
from typing import TYPE_CHECKING, Any

# Imported on first use: pytest imports this package (for its plugin) in every
# session of a project that has taskboard-pg installed, tests of Taskboard or not.
_EXPORTS = {
    "DEFAULT_TIMEOUT_SECONDS": "taskboard.testing.inline",
    "JobOutcome": "taskboard.testing.inline",
    "StillRunnable": "taskboard.testing.inline",
    "arun_until_empty": "taskboard.testing.inline",
    "assert_enqueued": "taskboard.testing.inline",
    "enqueued_jobs": "taskboard.testing.inline",
    "run_until_empty": "taskboard.testing.inline",
}

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "JobOutcome",
    "StillRunnable",
    "arun_until_empty",
    "assert_enqueued",
    "enqueued_jobs",
    "run_until_empty",
]

if TYPE_CHECKING:
    from taskboard.testing.inline import (
        DEFAULT_TIMEOUT_SECONDS,
        JobOutcome,
        StillRunnable,
        arun_until_empty,
        assert_enqueued,
        enqueued_jobs,
        run_until_empty,
    )


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'taskboard.testing' has no attribute {name!r}")
