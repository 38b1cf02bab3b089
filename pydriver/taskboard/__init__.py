"""Taskboard: a PostgreSQL job queue whose leases are fenced by tokens.

Who holds a job is decided by PL/pgSQL functions in the ``taskboard``
schema; this package calls them, runs handlers and keeps leases alive.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.18.3"

# Imported on first use, so that importing the package needs nothing but the
# standard library until one of these names is used.
_EXPORTS = {
    "Taskboard": "taskboard.app",
    "Task": "taskboard.tasks",
    "TaskHandle": "taskboard.app",
    "Group": "taskboard.app",
    "AsyncGroup": "taskboard.app",
    "JobEvent": "taskboard.events",
    "StartupError": "taskboard.errors",
    "InvalidArgument": "taskboard.errors",
    "JobCancelled": "taskboard.errors",
    "JobFailed": "taskboard.errors",
    "JobInfo": "taskboard.sql.admin_async",
    "JobNotFound": "taskboard.errors",
    "PermissionDenied": "taskboard.errors",
    "AsyncContext": "taskboard.context",
    "SyncContext": "taskboard.context",
    "TaskboardError": "taskboard.errors",
    "ConfigError": "taskboard.errors",
    "SchemaVersionError": "taskboard.errors",
    "TaskError": "taskboard.errors",
    "UnsettledJobs": "taskboard.errors",
    "Settings": "taskboard.settings",
    "load_settings": "taskboard.settings",
    "Retry": "taskboard.retries",
    "Abort": "taskboard.retries",
    "Snooze": "taskboard.retries",
    "ExponentialBackoff": "taskboard.retries",
}

__all__ = [
    "Abort",
    "AsyncContext",
    "AsyncGroup",
    "ConfigError",
    "ExponentialBackoff",
    "Group",
    "InvalidArgument",
    "JobCancelled",
    "JobEvent",
    "JobFailed",
    "JobInfo",
    "JobNotFound",
    "PermissionDenied",
    "Retry",
    "SchemaVersionError",
    "Settings",
    "Snooze",
    "StartupError",
    "SyncContext",
    "Task",
    "TaskError",
    "TaskHandle",
    "Taskboard",
    "TaskboardError",
    "UnsettledJobs",
    "load_settings",
]

if TYPE_CHECKING:
    from taskboard.app import AsyncGroup, Group, Taskboard, TaskHandle
    from taskboard.context import AsyncContext, SyncContext
    from taskboard.errors import (
        ConfigError,
        InvalidArgument,
        JobCancelled,
        JobFailed,
        JobNotFound,
        PermissionDenied,
        SchemaVersionError,
        StartupError,
        TaskboardError,
        TaskError,
        UnsettledJobs,
    )
    from taskboard.events import JobEvent
    from taskboard.retries import Abort, ExponentialBackoff, Retry, Snooze
    from taskboard.settings import Settings, load_settings
    from taskboard.sql.admin_async import JobInfo
    from taskboard.tasks import Task


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'taskboard' has no attribute {name!r}")
