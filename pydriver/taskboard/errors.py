"""Errors raised by the driver: one base class, one line each.

SQLSTATEs the taskboard functions raise on purpose become the exceptions
below in one place, `translate`, for the sync and the async API alike.
This module imports no other taskboard module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import psycopg

INVALID_PARAMETER_VALUE = "22023"
INSUFFICIENT_PRIVILEGE = "42501"


class TaskboardError(Exception):
    """Base class of every error the driver raises on purpose."""


class ConfigError(TaskboardError):
    """Settings are missing or inconsistent; the message is one line naming the setting."""


class UnsettledJobs(TaskboardError):
    """A worker stopped holding jobs whose outcome it could not tell the database (it did
    not answer): their leases expire and another worker runs them again."""

    def __init__(self, worker: str, held: int) -> None:
        super().__init__(
            f"worker {worker} stopped holding {held} job(s) it could not settle; "
            "their leases will expire and they will run again"
        )
        self.held = held


class HandlerProcessExited(TaskboardError):
    """A handler process of `taskboard worker --processes N` exited on its own (or stopped
    answering and was killed): the claimer failed the jobs it was running and stopped."""

    def __init__(self, worker: str, exited: list[str]) -> None:
        super().__init__(
            f"worker {worker} stopped because a handler process exited on its own: "
            + "; ".join(exited)
        )
        self.exited = exited


class TaskError(TaskboardError):
    """A task is registered or used wrongly (unknown name, bad options)."""


class DatabaseRefused(TaskboardError):
    """A taskboard function refused the call; `sqlstate` is the server's code.

    The psycopg error is the `__cause__`.
    """

    sqlstate: str

    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate

    def __reduce__(self) -> tuple[type[DatabaseRefused], tuple[str, str]]:
        return type(self), (str(self), self.sqlstate)


class InvalidArgument(DatabaseRefused, ValueError):
    """An argument was refused (SQLSTATE 22023); the message is the server's and names it."""


class PermissionDenied(DatabaseRefused):
    """The login may not call the function (SQLSTATE 42501); the message names the role needed."""


def translated(exc: psycopg.Error, *, role_needed: str | None = None) -> Exception:
    """The driver's exception for `exc`, or `exc` itself when the driver has none for it.

    22023 becomes InvalidArgument carrying the server's primary message;
    42501 becomes PermissionDenied, whose message ends with the role to
    grant when `role_needed` is given. The result's `__cause__` is not set.
    """
    primary = exc.diag.message_primary or str(exc)
    if exc.sqlstate == INVALID_PARAMETER_VALUE:
        return InvalidArgument(primary, exc.sqlstate)
    if exc.sqlstate == INSUFFICIENT_PRIVILEGE:
        hint = f": grant {role_needed} to this login" if role_needed else ""
        return PermissionDenied(primary + hint, exc.sqlstate)
    return exc


# The application roles, each allowed what the ones before it are (the SQL grants).
ROLE_KINDS = ("producer", "worker", "admin")
DEFAULT_ROLE_PREFIX = "taskboard"


def missing_role(
    refusal: str, kind: str, *, login: str, prefix: str | None, holds: Sequence[str]
) -> str:
    """One line: the server's `refusal`, the Taskboard roles `login` holds, and the
    GRANT of the `kind` role (producer, worker or admin) that lets it through.

    `prefix` is the one the schema was installed with (None: the default's
    names, and the other prefixes' pattern); `login` is quoted as SQL needs it.
    """
    role = f"{prefix or DEFAULT_ROLE_PREFIX}_{kind}"
    names = [f"{prefix or DEFAULT_ROLE_PREFIX}_{held}" for held in holds]
    held = f"{', '.join(names)}, not {role}" if names else "no Taskboard role"
    other = f" (PREFIX_{kind} if installed with another prefix)" if prefix is None else ""
    return (
        f"{refusal}: this login holds {held}; "
        f"as the deploying login run: GRANT {role} TO {login}{other}"
    )


def one_line(text: str) -> str:
    """`text` with every run of whitespace, newlines included, as one space."""
    return " ".join(text.split())


@contextlib.contextmanager
def translate(*, role_needed: str | None = None) -> Iterator[None]:
    """Raise the driver's exception for a psycopg error raised inside, `from` that error.

    `role_needed` is the role whose grant allows the calls made inside
    (e.g. taskboard_producer). Every other psycopg error passes through
    unchanged. Wraps awaits as well: use it with `with` in async code too.
    """
    try:
        yield
    except psycopg.Error as exc:
        mapped = translated(exc, role_needed=role_needed)
        if mapped is exc:
            raise
        raise mapped from exc


class JobNotFound(TaskboardError, LookupError):
    """No job has this id (never created, or pruned)."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id} does not exist")
        self.job_id = job_id


class JobFailed(TaskboardError):
    """The job is dead: every attempt failed, or one was aborted; `errors` lists them."""

    def __init__(self, job_id: int, errors: list[dict[str, object]]) -> None:
        last = errors[-1].get("error") if errors else None
        super().__init__(f"job {job_id} is dead" + (f": {last}" if last else ""))
        self.job_id = job_id
        self.errors = errors


class JobCancelled(TaskboardError):
    """The job was cancelled before it succeeded."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id} was cancelled")
        self.job_id = job_id


class StartupError(TaskboardError):
    """The worker cannot work on this database; the message is one line naming the fix."""


class SchemaVersionError(StartupError):
    """The database's taskboard schema is missing or of a version this driver does not support."""
