"""Outcomes: what the database is told about a claim whose handler ended, as text it accepts.

An outcome is one of three: Complete, Fail or Release. Code that acts on
one matches on its class.

Nothing here may raise on a handler's behalf: an exception whose `str()`
raises, a message with NUL bytes or lone surrogates, a result jsonb
cannot hold all become text that PostgreSQL stores.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from taskboard.sql.parameters import NotJSON, json_text

# A result whose JSON is larger than this is not stored (the job still
# completes): job rows are read by claim, get_job and the dashboards.
MAX_RESULT_BYTES = 16 * 1024 * 1024
MAX_ERROR_CHARS = 2000
# A longer traceback keeps its last characters, where the exception is. fail
# stores at most 16384 characters of one, cutting it the same way.
MAX_TRACEBACK_CHARS = 16000
# The key of the result recorded instead of one that could not be stored.
NOT_STORED_KEY = "taskboard_result_not_stored"


@dataclass(frozen=True, slots=True)
class Complete:
    """The handler succeeded: complete the job with `result`."""

    name: ClassVar[str] = "complete"  # the word events, traces and logs use
    result: str | None = None  # the result as JSON text; None for no result


@dataclass(frozen=True, slots=True)
class Fail:
    """The attempt failed: fail the job with `error`."""

    name: ClassVar[str] = "fail"
    error: str
    # Seconds until the next attempt; None: the database's backoff.
    retry_in: float | None = None
    retry: bool = True  # False makes the job dead at once
    traceback: str | None = None  # the handler's formatted traceback, bounded


@dataclass(frozen=True, slots=True)
class Release:
    """Hand the job back without using an attempt, runnable again after `delay` seconds."""

    name: ClassVar[str] = "release"
    delay: float = 0.0


Outcome: TypeAlias = Complete | Fail | Release


class ResultNotStored(Exception):
    """The handler's result cannot be stored; the message says why."""


def safe_text(text: str) -> str:
    """`text` as PostgreSQL text accepts it: no NUL, no lone surrogates."""
    text = text.replace("\x00", "\\0")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def describe(exc: BaseException) -> str:
    """`ExcType: first line of the message`, safe to store whatever the exception does."""
    try:
        message = str(exc)
    except Exception as inner:  # noqa: BLE001 - a broken __str__ must not break the worker
        message = f"<str() of the exception raised {type(inner).__name__}>"
    message = safe_text(message).strip()
    text = message.splitlines()[0] if message else ""
    name = safe_text(type(exc).__name__)
    described = f"{name}: {text}" if text else name
    return described[:MAX_ERROR_CHARS]


def format_traceback(exc: BaseException) -> str | None:
    """The exception's formatted traceback, bounded and safe to store; None when it has none.

    One longer than MAX_TRACEBACK_CHARS keeps its end, after a first line
    saying how many characters were cut.
    """
    if exc.__traceback__ is None:
        return None
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception as inner:  # noqa: BLE001 - formatting must not break the worker
        return f"<the traceback could not be formatted: {type(inner).__name__}>"
    text = safe_text(text).rstrip("\n")
    if len(text) > MAX_TRACEBACK_CHARS:
        cut = len(text) - MAX_TRACEBACK_CHARS
        text = f"[traceback cut: its first {cut} characters are not stored]\n" + text[cut:]
    return text


def encode_result(result: Any) -> str | None:
    """The result as JSON text that jsonb accepts; raises ResultNotStored otherwise."""
    if result is None:
        return None
    try:
        text = json_text(result)
    except NotJSON as exc:
        raise ResultNotStored(f"the result {exc}") from None
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > MAX_RESULT_BYTES:
        raise ResultNotStored(
            f"the result's JSON is {size} bytes, above the {MAX_RESULT_BYTES} bytes stored"
        )
    return text


def not_stored(why: str) -> str:
    """The result recorded for a job whose handler's result could not be stored."""
    return json.dumps({NOT_STORED_KEY: safe_text(why)[:MAX_ERROR_CHARS]})
