"""Errors raised by the driver: one base class, one line each."""

from __future__ import annotations


class TaskboardError(Exception):
    """Base class of every error the driver raises on purpose."""


class ConfigError(TaskboardError):
    """Settings are missing or inconsistent; the message is one line naming the setting."""


class TaskError(TaskboardError):
    """A task is registered or used wrongly (unknown name, bad options)."""


class StartupError(TaskboardError):
    """The worker cannot work on this database; the message is one line naming the fix."""


class SchemaVersionError(StartupError):
    """The database's taskboard schema is missing or of a version this driver does not support."""
