"""Errors raised by the driver: one base class, one line each."""

from __future__ import annotations


class TaskboardError(Exception):
    """Base class of every error the driver raises on purpose."""


class ConfigError(TaskboardError):
    """Settings are missing or inconsistent; the message is one line naming the setting."""


class SchemaVersionError(TaskboardError):
    """The database's taskboard schema is missing or of a version this driver does not support."""


class TaskError(TaskboardError):
    """A task is registered or used wrongly (unknown name, bad options)."""
