"""The checks of the arguments every call sends: each refusal is an InvalidArgument
naming the argument, before anything reaches the database.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import psycopg

from taskboard.errors import INVALID_PARAMETER_VALUE, InvalidArgument


class NotJSON(ValueError):
    """A value that jsonb cannot store; the message says why."""


# \u0000 in JSON text, not preceded by an escaped backslash.
ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def json_text(value: Any) -> str:
    """`value` as JSON text that jsonb accepts; NotJSON saying why otherwise.

    Stricter than json.dumps: no NaN or infinity, no NUL character, no lone
    surrogate (jsonb refuses all three).
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except Exception as exc:  # noqa: BLE001 - any failure of the caller's object means "not JSON"
        raise NotJSON(f"is not JSON-serialisable: {type(exc).__name__}: {str(exc)[:200]}") from None
    if "\\u0000" in text and ESCAPED_NUL.search(text):
        raise NotJSON("holds a NUL character, which jsonb cannot store")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # Surrogates: a pair held as two code points is one character; a lone one is not.
            try:
                text = text.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                raise NotJSON("holds a lone surrogate, which jsonb cannot store") from None
    return text


def seconds(value: float) -> dt.timedelta:
    return dt.timedelta(seconds=value)


# -- the caller's connection -------------------------------------------------------

# How to reach the psycopg connection under another library's connection object,
# by the top-level package of its type.
UNDERLYING = {
    "sqlalchemy": (
        "pass the psycopg connection under it: session.connection().connection.driver_connection"
        " for a Session, connection.connection.driver_connection for a Connection,"
        " (await (await session.connection()).get_raw_connection()).driver_connection"
        " for an AsyncSession (an engine on the postgresql+psycopg dialect)"
    ),
    "django": (
        "pass the psycopg connection under it: django.db.connection.connection"
        " (open inside transaction.atomic(); the postgresql backend with psycopg 3)"
    ),
    "psycopg2": "Taskboard needs psycopg 3 (the psycopg package), not psycopg2",
    "asyncpg": "Taskboard needs psycopg 3 (the psycopg package); asyncpg is not supported",
}


def check_connection(call: str, conn: object, wanted: type[Any]) -> None:
    """TypeError unless `conn` is the psycopg connection `call` takes.

    `call` is the public name (aenqueue, jobs, ...); `wanted` is the
    connection class it takes: psycopg.AsyncConnection for an async call,
    psycopg.Connection for a sync one. The message names the twin that takes
    the connection given, or says how to reach the psycopg connection under
    another library's object.
    """
    asynchronous = wanted is psycopg.AsyncConnection
    if isinstance(conn, wanted):
        return
    if asynchronous and isinstance(conn, psycopg.Connection):
        raise TypeError(
            f"{call} needs a psycopg.AsyncConnection; with a sync psycopg.Connection call {call[1:]}"
        )
    if not asynchronous and isinstance(conn, psycopg.AsyncConnection):
        raise TypeError(
            f"{call} needs a psycopg.Connection; with a psycopg.AsyncConnection call a{call}"
        )
    kind = type(conn)
    given = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    how = UNDERLYING.get(kind.__module__.partition(".")[0])
    raise TypeError(
        f"{call} needs a psycopg.{wanted.__name__} as conn, got {given}"
        + (f"; {how}" if how else "")
    )


def trace_context_json(trace_context: Mapping[str, str] | None) -> str | None:
    """A trace context as JSON text for enqueue's trace_context; None for none."""
    return None if not trace_context else json.dumps(dict(trace_context))


INT4_MIN, INT4_MAX = -(2**31), 2**31 - 1


def int4(name: str, value: Any) -> int:
    """`value` when it is an integer the SQL functions take; InvalidArgument naming `name` else."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}", INVALID_PARAMETER_VALUE)
    if not INT4_MIN <= value <= INT4_MAX:
        raise InvalidArgument(
            f"{name} must be between {INT4_MIN} and {INT4_MAX}, got {value}",
            INVALID_PARAMETER_VALUE,
        )
    return value


def text(name: str, value: Any) -> str:
    """`value` when it is a str; InvalidArgument naming `name` else (the SQL functions check the rest)."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a string, got {value!r}", INVALID_PARAMETER_VALUE)
    return value


def payload_json(name: str, payload: Any) -> str:
    """A payload as JSON text (None is {}); InvalidArgument naming `name` when jsonb cannot hold it."""
    try:
        return json_text({} if payload is None else payload)
    except NotJSON as exc:
        raise InvalidArgument(f"{name} {exc}", INVALID_PARAMETER_VALUE) from None


def sequence(name: str, value: Any) -> list[Any]:
    """Any iterable of items as a list; InvalidArgument for a str, bytes or mapping (which
    would iterate over characters or keys) and for what is not iterable."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidArgument(
            f"{name} must be a list (any iterable of items), got {type(value).__name__}",
            INVALID_PARAMETER_VALUE,
        )
    return list(value)


def text_list(name: str, values: Any) -> list[str | None]:
    """Strings or None, one per item; InvalidArgument naming `name[i]` for another item."""
    return [
        None if v is None else text(f"{name}[{i}]", v) for i, v in enumerate(sequence(name, values))
    ]


def dedupe_list(keys: Any) -> list[str | None]:
    return text_list("dedupe_keys", keys)


def key_list(keys: Any) -> list[str | None] | None:
    """concurrency_keys as sent: None when no item has a key (the call without them)."""
    listed = text_list("concurrency_keys", keys)
    return listed if any(k is not None for k in listed) else None


MAX_DEPENDENCIES = 10_000  # enqueue's bound on the jobs of depends_on
DEPENDENCY_FAILURES = ("cancel", "run")  # what on_dependency_failure may say


def enqueue_params(
    task: str,
    payload: Any,
    queue: str,
    run_at: dt.datetime | None,
    priority: int,
    max_attempts: int,
    dedupe_key: str | None,
    concurrency_key: str | None = None,
    depends_on: Iterable[int] | None = None,
    on_dependency_failure: str = "cancel",
) -> dict[str, Any]:
    """enqueue's arguments. depends_on and on_dependency_failure are sent only with
    dependencies (the call without them works on every schema): an empty depends_on
    names none, and is sent as none. on_dependency_failure "run" without depends_on
    (None) is refused, as the schema refuses it: it would change nothing."""
    dependencies = dependency_list(depends_on) or None
    failure = dependency_failure(on_dependency_failure)
    if failure == "run" and depends_on is None:
        raise InvalidArgument(
            "on_dependency_failure 'run' needs depends_on: a job without dependencies has"
            " none to fail (pass depends_on, or leave on_dependency_failure out)",
            INVALID_PARAMETER_VALUE,
        )
    if dependencies is not None and dedupe_key is not None:
        raise InvalidArgument(
            "a job with depends_on cannot have a dedupe_key", INVALID_PARAMETER_VALUE
        )
    return {
        "task": text("task", task),
        "payload": payload_json("payload", payload),
        "queue": text("queue", queue),
        "run_at": run_at,
        "priority": int4("priority", priority),
        "max_attempts": int4("max_attempts", max_attempts),
        "dedupe_key": optional_text("dedupe_key", dedupe_key),
        "concurrency_key": optional_text("concurrency_key", concurrency_key),
        "depends_on": dependencies,
        "on_dependency_failure": None if dependencies is None else failure,
    }


def dependency_list(depends_on: Any) -> list[int] | None:
    """depends_on as job ids (bigints, not bools), at most MAX_DEPENDENCIES of them; None
    for None; InvalidArgument naming `depends_on[i]` for another item."""
    if depends_on is None:
        return None
    ids = [int8(f"depends_on[{i}]", v) for i, v in enumerate(sequence("depends_on", depends_on))]
    if len(ids) > MAX_DEPENDENCIES:
        raise InvalidArgument(
            f"depends_on must name at most {MAX_DEPENDENCIES} jobs, got {len(ids)}",
            INVALID_PARAMETER_VALUE,
        )
    return ids


def dependency_failure(value: Any) -> str:
    """on_dependency_failure when it is cancel or run; InvalidArgument else."""
    if value not in DEPENDENCY_FAILURES or not isinstance(value, str):
        raise InvalidArgument(
            f"on_dependency_failure must be cancel or run, got {value!r}",
            INVALID_PARAMETER_VALUE,
        )
    return value


def enqueue_many_params(
    task: str,
    payloads: Iterable[Any],
    queue: str,
    run_at: dt.datetime | None,
    priority: int,
    max_attempts: int,
    dedupe_keys: Iterable[str | None] | None,
    concurrency_keys: Iterable[str | None] | None = None,
) -> dict[str, Any]:
    return {
        "task": text("task", task),
        "payloads": [
            payload_json(f"payloads[{i}]", p) for i, p in enumerate(sequence("payloads", payloads))
        ],
        "queue": text("queue", queue),
        "run_at": run_at,
        "priority": int4("priority", priority),
        "max_attempts": int4("max_attempts", max_attempts),
        "dedupe_keys": None if dedupe_keys is None else dedupe_list(dedupe_keys),
        "concurrency_keys": None if concurrency_keys is None else key_list(concurrency_keys),
    }


def release_of(version: str | None) -> tuple[int, ...] | None:
    """(X, Y, Z) of release X.Y.Z; None for None or anything else."""
    parts = (version or "").split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def queue_params(queue: str) -> dict[str, Any]:
    return {"queue": text("queue", queue)}


def queue_limit_params(queue: str, max_running: int | None) -> dict[str, Any]:
    limit = None if max_running is None else int4("max_running", max_running)
    return {"queue": text("queue", queue), "max_running": limit}


def queue_discard_params(queue: str, discard: bool) -> dict[str, Any]:
    if not isinstance(discard, bool):
        raise InvalidArgument(
            f"discard must be True or False, got {discard!r}", INVALID_PARAMETER_VALUE
        )
    return {"queue": text("queue", queue), "discard": discard}


def key_limit_params(queue: str, max_running_per_key: int | None) -> dict[str, Any]:
    limit = (
        None if max_running_per_key is None else int4("max_running_per_key", max_running_per_key)
    )
    return {"queue": text("queue", queue), "max_running_per_key": limit}


MAX_RATE_STARTS = 100_000  # set_rate_limit's bound on starts per window
MAX_RATE_PER = dt.timedelta(days=31)  # and on the window's length


def rate_limit_params(queue: str, starts: Any, per: Any, by_key: Any) -> dict[str, Any]:
    """set_rate_limit's arguments: `starts` and `per` (a timedelta, or seconds) both given,
    or both None to remove the limit; InvalidArgument naming the argument otherwise."""
    if not isinstance(by_key, bool):
        raise InvalidArgument(
            f"by_key must be True or False, got {by_key!r}", INVALID_PARAMETER_VALUE
        )
    if starts is None and per is None:
        if by_key:
            raise InvalidArgument(
                "by_key needs a rate limit: give starts and per, or by_key=False to remove it",
                INVALID_PARAMETER_VALUE,
            )
        return {"queue": text("queue", queue), "starts": None, "per": None, "by_key": False}
    if starts is None or per is None:
        raise InvalidArgument(
            f"starts and per must both be given, or both be None (no rate limit),"
            f" got starts={starts!r} and per={per!r}",
            INVALID_PARAMETER_VALUE,
        )
    count = int4("starts", starts)
    if not 1 <= count <= MAX_RATE_STARTS:
        stop = ": pause the queue to stop it" if count < 1 else ""
        raise InvalidArgument(
            f"starts must be between 1 and {MAX_RATE_STARTS}, got {count}{stop}",
            INVALID_PARAMETER_VALUE,
        )
    return {
        "queue": text("queue", queue),
        "starts": count,
        "per": rate_window(per),
        "by_key": by_key,
    }


MIN_RATE_PER_SECONDS = 0.000001  # the shortest window: one microsecond, as PostgreSQL counts


def rate_window(per: Any) -> dt.timedelta:
    """`per` as a timedelta when it is a positive duration of at most MAX_RATE_PER (a
    timedelta, or a number of seconds); InvalidArgument naming `per` else."""
    if isinstance(per, dt.timedelta):
        window = per
    elif isinstance(per, int | float) and not isinstance(per, bool) and math.isfinite(per):
        window = seconds(per)
    else:
        raise InvalidArgument(
            f"per must be a timedelta or a finite number of seconds, got {per!r}",
            INVALID_PARAMETER_VALUE,
        )
    if window <= dt.timedelta(0) and (isinstance(per, dt.timedelta) or per <= 0):
        raise InvalidArgument(f"per must be positive, got {per!r}", INVALID_PARAMETER_VALUE)
    if window <= dt.timedelta(0):  # a positive number of seconds under half a microsecond
        raise InvalidArgument(
            f"per must be at least {MIN_RATE_PER_SECONDS:f} seconds (one microsecond, the"
            f" database's precision), got {per!r}, which rounds to 0",
            INVALID_PARAMETER_VALUE,
        )
    if window > MAX_RATE_PER:
        raise InvalidArgument(
            f"per must be at most {MAX_RATE_PER.days} days, got {per!r}", INVALID_PARAMETER_VALUE
        )
    return window


INT8_MIN, INT8_MAX = -(2**63), 2**63 - 1


def int8(name: str, value: Any) -> int:
    """`value` when it is a bigint; InvalidArgument naming `name` else."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}", INVALID_PARAMETER_VALUE)
    if not INT8_MIN <= value <= INT8_MAX:
        raise InvalidArgument(f"{name} is out of range, got {value}", INVALID_PARAMETER_VALUE)
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def job_params(job_id: Any) -> dict[str, Any]:
    return {"job_id": int8("job_id", job_id)}


MAX_PAGE = 1000  # find_jobs's bound on max_rows


def find_jobs_params(
    queue: Any, state: Any, task: Any, after_id: Any, limit: Any
) -> dict[str, Any]:
    """find_jobs's arguments; InvalidArgument naming `limit` outside 1..MAX_PAGE."""
    max_rows = int4("limit", limit)
    if not 1 <= max_rows <= MAX_PAGE:
        raise InvalidArgument(
            f"limit must be between 1 and {MAX_PAGE}, got {max_rows}", INVALID_PARAMETER_VALUE
        )
    return {
        "queue": optional_text("queue", queue),
        "state": optional_text("state", state),
        "task": optional_text("task", task),
        "after_id": None if after_id is None else int8("after_id", after_id),
        "max_rows": max_rows,
    }


def prune_params(older_than: Any, batch: Any) -> dict[str, Any]:
    if isinstance(older_than, dt.timedelta):
        interval = older_than
    elif isinstance(older_than, (int, float)) and not isinstance(older_than, bool):
        if not math.isfinite(older_than):
            raise InvalidArgument(
                f"older_than must be a finite number of seconds, got {older_than!r}",
                INVALID_PARAMETER_VALUE,
            )
        interval = seconds(older_than)
    else:
        raise InvalidArgument(
            f"older_than must be seconds or a timedelta, got {older_than!r}",
            INVALID_PARAMETER_VALUE,
        )
    return {"older_than": interval, "batch": int4("batch", batch)}
