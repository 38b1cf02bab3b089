"""The SQL calls: the only module with SQL text, and it calls taskboard.* functions only.

Every decision about who holds a job is made by those functions; these
wrappers pass arguments and return their answers unchanged.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.adapt import Loader
from psycopg.rows import dict_row, tuple_row
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.json import JsonbLoader, JsonLoader

from taskboard.errors import INVALID_PARAMETER_VALUE, InvalidArgument

CHANNEL = "taskboard"


@dataclass(frozen=True, slots=True)
class Claimed:
    """One row of taskboard.claim: the only place a lease token comes from.

    `payload_error` says why the payload could not be decoded (jsonb
    accepts JSON that Python's json module refuses: nesting deeper than its
    recursion limit, integers of more than 4,300 digits); `payload` is then
    None and the worker fails that job alone.
    """

    job_id: int
    token: uuid.UUID
    task: str
    payload: Any
    attempt: int
    lease_expires_at: dt.datetime
    idempotency_key: uuid.UUID
    fence: int | None = None
    payload_error: str | None = None
    queue: str = ""  # the queue it was claimed from (claim's argument)
    # The W3C trace context its enqueuer stored (schema 0.4.0 on); None when none.
    trace_context: dict[str, str] | None = None
    # How long the job had been runnable when claimed, database clock (schema 0.4.0 on).
    waited: dt.timedelta | None = None


def claimed(row: Sequence[Any], queue: str = "") -> Claimed:
    """A Claimed from a claim row of `queue` whose payload comes as text (decoded here,
    per job).

    The row ends with the fence on schemas that have one (0.3.0 on), then
    the trace context and how long the job waited on schemas that have them
    (0.4.0 on).
    """
    job_id, token, task, payload_text, attempt, lease_expires_at, idempotency_key = row[:7]
    fence = row[7] if len(row) > 7 else None
    trace_context = row[8] if len(row) > 8 else None
    waited = row[9] if len(row) > 9 else None
    why: str | None = None
    try:
        payload = json.loads(payload_text)
    except (ValueError, RecursionError) as exc:
        why = f"the payload cannot be decoded: {type(exc).__name__}: {str(exc)[:200]}"
        payload = None
    return Claimed(
        job_id,
        token,
        task,
        payload,
        attempt,
        lease_expires_at,
        idempotency_key,
        fence,
        why,
        queue,
        trace_context if isinstance(trace_context, dict) else None,
        waited,
    )


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


def check_connection(call: str, conn: object, *, asynchronous: bool) -> None:
    """TypeError unless `conn` is the psycopg connection `call` takes.

    `call` is the public name (aenqueue, jobs, ...): an async call needs a
    psycopg.AsyncConnection, a sync one a psycopg.Connection. The message
    names the twin that takes the connection given, or says how to reach the
    psycopg connection under another library's object.
    """
    wanted = psycopg.AsyncConnection if asynchronous else psycopg.Connection
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


# -- producers -----------------------------------------------------------------

ENQUEUE = """
SELECT taskboard.enqueue(
    task => %(task)s, payload => %(payload)s::jsonb, queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_key => %(dedupe_key)s)
"""

ENQUEUE_MANY = """
SELECT * FROM taskboard.enqueue_many(
    task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_keys => %(dedupe_keys)s::text[])
"""

# The schema release from which enqueue and enqueue_many take the trace
# context and claim hands it back. The forms with it are used only when
# there is a context to send: the ones without work on every schema.
TRACE_CONTEXT_SINCE = (0, 4, 0)

ENQUEUE_TRACED = """
SELECT taskboard.enqueue(
    task => %(task)s, payload => %(payload)s::jsonb, queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_key => %(dedupe_key)s,
    trace_context => %(trace_context)s::jsonb)
"""

ENQUEUE_MANY_TRACED = """
SELECT * FROM taskboard.enqueue_many(
    task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s, run_at => %(run_at)s,
    priority => %(priority)s, max_attempts => %(max_attempts)s, dedupe_keys => %(dedupe_keys)s::text[],
    trace_context => %(trace_context)s::jsonb)
"""


def trace_context_json(trace_context: Mapping[str, str] | None) -> str | None:
    """A trace context as JSON text for enqueue's trace_context; None for none."""
    return None if not trace_context else json.dumps(dict(trace_context))


def _enqueue_query(params: dict[str, Any], plain: str, traced: str) -> str:
    return plain if params.get("trace_context") is None else traced


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


def dedupe_list(keys: Any) -> list[str | None]:
    return [
        None if k is None else text(f"dedupe_keys[{i}]", k)
        for i, k in enumerate(sequence("dedupe_keys", keys))
    ]


def enqueue_params(
    task: str,
    payload: Any,
    queue: str,
    run_at: dt.datetime | None,
    priority: int,
    max_attempts: int,
    dedupe_key: str | None,
) -> dict[str, Any]:
    return {
        "task": text("task", task),
        "payload": payload_json("payload", payload),
        "queue": text("queue", queue),
        "run_at": run_at,
        "priority": int4("priority", priority),
        "max_attempts": int4("max_attempts", max_attempts),
        "dedupe_key": None if dedupe_key is None else text("dedupe_key", dedupe_key),
    }


def enqueue_many_params(
    task: str,
    payloads: Iterable[Any],
    queue: str,
    run_at: dt.datetime | None,
    priority: int,
    max_attempts: int,
    dedupe_keys: Iterable[str | None] | None,
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
    }


# The calls that take a caller's conn= read their rows through tuple_row (or
# dict_row) cursors: the caller's connection may have any row factory
# (dict_row, class_row, ...).


def _value(conn: psycopg.Connection[Any], query: str, params: dict[str, Any] | None = None) -> Any:
    """The first column of the first row of `query`, None without a row, whatever the
    row factory of `conn`."""
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(query, params).fetchone()
    return None if row is None else row[0]


async def _avalue(
    conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any] | None = None
) -> Any:
    """`_value` on an AsyncConnection."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(query, params)).fetchone()
    return None if row is None else row[0]


# With params["trace_context"] set (JSON text, see trace_context_json), the
# calls take the form that stores it: the caller has made sure the schema
# has it (TRACE_CONTEXT_SINCE).


def enqueue(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    query = _enqueue_query(params, ENQUEUE, ENQUEUE_TRACED)
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(query, params).fetchone()
    assert row is not None
    return int(row[0])


async def aenqueue(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    query = _enqueue_query(params, ENQUEUE, ENQUEUE_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(query, params)).fetchone()
    assert row is not None
    return int(row[0])


def enqueue_many(conn: psycopg.Connection[Any], params: dict[str, Any]) -> list[int]:
    query = _enqueue_query(params, ENQUEUE_MANY, ENQUEUE_MANY_TRACED)
    with conn.cursor(row_factory=tuple_row) as cur:
        return [int(r[0]) for r in cur.execute(query, params).fetchall()]


async def aenqueue_many(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[int]:
    query = _enqueue_query(params, ENQUEUE_MANY, ENQUEUE_MANY_TRACED)
    async with conn.cursor(row_factory=tuple_row) as cur:
        return [int(r[0]) for r in await (await cur.execute(query, params)).fetchall()]


def release_of(version: str | None) -> tuple[int, ...] | None:
    """(X, Y, Z) of release X.Y.Z; None for None or anything else."""
    parts = (version or "").split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def stores_trace_context(conn: psycopg.Connection[Any]) -> bool:
    """Whether the schema on `conn` takes the trace context (TRACE_CONTEXT_SINCE on)."""
    release = release_of(version(conn))
    return release is not None and release >= TRACE_CONTEXT_SINCE


async def astores_trace_context(conn: psycopg.AsyncConnection[Any]) -> bool:
    """`stores_trace_context` for asyncio."""
    release = release_of(await aversion(conn))
    return release is not None and release >= TRACE_CONTEXT_SINCE


# -- queue control (the admin role) --------------------------------------------

PAUSE = "SELECT taskboard.pause(queue => %(queue)s)"
RESUME = "SELECT taskboard.resume(queue => %(queue)s)"
SET_QUEUE_LIMIT = (
    "SELECT taskboard.set_queue_limit(queue => %(queue)s, max_running => %(max_running)s)"
)


def queue_params(queue: str) -> dict[str, Any]:
    return {"queue": text("queue", queue)}


def queue_limit_params(queue: str, max_running: int | None) -> dict[str, Any]:
    limit = None if max_running is None else int4("max_running", max_running)
    return {"queue": text("queue", queue), "max_running": limit}


def _changed(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> bool:
    return bool(_value(conn, query, params))


async def _achanged(conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any]) -> bool:
    return bool(await _avalue(conn, query, params))


def pause(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    return _changed(conn, PAUSE, params)


async def apause(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    return await _achanged(conn, PAUSE, params)


def resume(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    return _changed(conn, RESUME, params)


async def aresume(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    return await _achanged(conn, RESUME, params)


def set_queue_limit(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    return _changed(conn, SET_QUEUE_LIMIT, params)


async def aset_queue_limit(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    return await _achanged(conn, SET_QUEUE_LIMIT, params)


# Every column the schema has: paused and max_running arrived in 0.3.0.
QUEUE_STATS = "SELECT * FROM taskboard.queue_stats ORDER BY queue, state"


def queue_stats(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """queue_stats' rows by column name."""
    with conn.cursor(row_factory=dict_row) as cur:
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
        return list(cur.execute(QUEUE_STATS_READ_AT).fetchall())


# -- periodic jobs -----------------------------------------------------------------

SCHEDULES = """
SELECT schedule, last_slot, last_job_id
  FROM taskboard.schedules
 ORDER BY schedule
"""


def schedules(conn: psycopg.Connection[Any]) -> list[dict[str, Any]] | None:
    """The rows of taskboard.schedules by column name; None when the schema has no such view."""
    row = conn.execute("SELECT to_regclass('taskboard.schedules') IS NOT NULL").fetchone()
    if not (row and row[0]):
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return list(cur.execute(SCHEDULES).fetchall())


def version(conn: psycopg.Connection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not schema_present(conn):
        return None
    release = _value(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)


def schema_present(conn: psycopg.Connection[Any]) -> bool:
    return bool(_value(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"))


async def aversion(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """The schema's release, or None when the taskboard schema is not installed."""
    if not await _avalue(conn, "SELECT to_regprocedure('taskboard.version()') IS NOT NULL"):
        return None
    release = await _avalue(conn, "SELECT taskboard.version()")
    return None if release is None else str(release)


# -- workers -------------------------------------------------------------------


async def listen(conn: psycopg.AsyncConnection[Any]) -> None:
    await conn.execute(f"LISTEN {CHANNEL}")


# The schema release from which claim hands out the fence.
FENCE_SINCE = (0, 3, 0)
# The columns later releases added to taskboard.claimed, in order: (since, name, type).
CLAIMED_EXTRAS = (
    (FENCE_SINCE, "fence", "bigint"),
    (TRACE_CONTEXT_SINCE, "trace_context", "jsonb"),
    (TRACE_CONTEXT_SINCE, "waited", "interval"),
)

# The payload comes as text and is decoded per job (sql.claimed): one that
# Python cannot decode fails its own job, not the whole claim. The claim
# queries read the columns of the schema the worker found at start-up
# (claimed_extras), made once per worker.
CLAIMED_COLUMNS = "job_id, token, task, payload::text, attempt, lease_expires_at, idempotency_key"
CLAIM_CALL = "taskboard.claim(queue => %s, worker => %s, batch => %s, lease => %s)"


def claimed_extras(release: tuple[int, ...]) -> list[tuple[str, str]]:
    """(name, type) of each column after CLAIMED_COLUMNS that `release`'s claim returns."""
    return [(name, type_) for since, name, type_ in CLAIMED_EXTRAS if release >= since]


def claim_query(extras: Sequence[tuple[str, str]]) -> str:
    columns = "".join(f", {name}" for name, _ in extras)
    return f"SELECT {CLAIMED_COLUMNS}{columns} FROM {CLAIM_CALL}"


CLAIM = claim_query([])


async def claim(
    conn: psycopg.AsyncConnection[Any],
    queue: str,
    worker: str,
    batch: int,
    lease: float,
    *,
    query: str = CLAIM,
) -> list[Claimed]:
    """claim's rows as Claimed; `query` is claim_query of the schema's columns."""
    cur = await conn.execute(query, [queue, worker, batch, seconds(lease)])
    return [claimed(row, queue) for row in await cur.fetchall()]


RENEW_MANY = """
SELECT job_id, lease_expires_at
  FROM taskboard.renew_many(job_ids => %s::bigint[], tokens => %s::uuid[], lease => %s)
"""


async def renew_many(
    conn: psycopg.AsyncConnection[Any],
    job_ids: Sequence[int],
    tokens: Sequence[uuid.UUID],
    lease: float,
) -> list[dt.datetime | None]:
    """New deadline per job, in input order; None where the token is no longer current
    or its lease expired."""
    cur = await conn.execute(RENEW_MANY, [list(job_ids), list(tokens), seconds(lease)])
    return [row[1] for row in await cur.fetchall()]


RENEW = "SELECT taskboard.renew(job_id => %s, token => %s, lease => %s)"


async def renew(
    conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, lease: float
) -> dt.datetime | None:
    """The new deadline, or None when the token is no longer current or its lease expired."""
    row = await (await conn.execute(RENEW, [job_id, token, seconds(lease)])).fetchone()
    return None if row is None else row[0]


COMPLETE = "SELECT taskboard.complete(job_id => %s, token => %s, result => %s::jsonb)"


async def complete(
    conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, result_json: str | None
) -> bool:
    """True when this token completed the job; False when it no longer holds it."""
    row = await (await conn.execute(COMPLETE, [job_id, token, result_json])).fetchone()
    return bool(row and row[0])


COMPLETE_MANY = """
SELECT job_id, completed
  FROM taskboard.complete_many(job_ids => %s::bigint[], tokens => %s::uuid[], results => %s::jsonb[])
"""


def complete_many_params(
    job_ids: Sequence[int], tokens: Sequence[uuid.UUID], results_json: Sequence[str | None]
) -> list[Any]:
    # No result at all (the common case) is sent as NULL, not an array of NULLs.
    results = None if all(r is None for r in results_json) else list(results_json)
    return [list(job_ids), list(tokens), results]


async def complete_many(
    conn: psycopg.AsyncConnection[Any],
    job_ids: Sequence[int],
    tokens: Sequence[uuid.UUID],
    results_json: Sequence[str | None],
) -> list[tuple[int, bool]]:
    """(job_id, completed) in input order; completed is False where the token is stale."""
    cur = await conn.execute(COMPLETE_MANY, complete_many_params(job_ids, tokens, results_json))
    return [(row[0], bool(row[1])) for row in await cur.fetchall()]


# Both calls in one statement: complete_many's rows first (token NULL), then
# claim's. One statement is one round trip and one transaction: if
# complete_many raises, no claim is made and nothing commits.
def complete_many_then_claim_query(extras: Sequence[tuple[str, str]]) -> str:
    nulls = "".join(f", NULL::{type_}" for _, type_ in extras)
    columns = "".join(f", k.{name}" for name, _ in extras)
    return f"""
SELECT c.job_id, c.completed, NULL::uuid, NULL::text, NULL::text, NULL::integer,
       NULL::timestamptz, NULL::uuid{nulls}
  FROM taskboard.complete_many(job_ids => %s::bigint[], tokens => %s::uuid[], results => %s::jsonb[]) AS c
UNION ALL
SELECT k.job_id, NULL, k.token, k.task, k.payload::text, k.attempt, k.lease_expires_at,
       k.idempotency_key{columns}
  FROM taskboard.claim(queue => %s, worker => %s, batch => %s, lease => %s) AS k
"""


COMPLETE_MANY_THEN_CLAIM = complete_many_then_claim_query([])


async def complete_many_then_claim(
    conn: psycopg.AsyncConnection[Any],
    job_ids: Sequence[int],
    tokens: Sequence[uuid.UUID],
    results_json: Sequence[str | None],
    claim_args: tuple[str, str, int, float],
    *,
    query: str = COMPLETE_MANY_THEN_CLAIM,
) -> tuple[list[tuple[int, bool]], list[Claimed]]:
    """complete_many, and claim(queue, worker, batch, lease), in one statement.

    (job_id, completed) in input order, and the claimed jobs. Both commit
    together or not at all.
    """
    queue, worker, batch, lease = claim_args
    params = [
        *complete_many_params(job_ids, tokens, results_json),
        queue,
        worker,
        batch,
        seconds(lease),
    ]
    rows = await (await conn.execute(query, params)).fetchall()
    completed = {row[0]: bool(row[1]) for row in rows if row[2] is None}
    done = [(job_id, completed[job_id]) for job_id in job_ids]
    return done, [claimed((row[0], *row[2:]), queue) for row in rows if row[2] is not None]


# The schema release from which fail takes retry and traceback.
FAIL_RETRY_SINCE = (0, 3, 0)

FAIL = "SELECT taskboard.fail(job_id => %s, token => %s, error => %s, retry_in => %s)"
FAIL_RETRY = (
    "SELECT taskboard.fail(job_id => %s, token => %s, error => %s, retry_in => %s,"
    " retry => %s, traceback => %s)"
)


async def fail(
    conn: psycopg.AsyncConnection[Any],
    job_id: int,
    token: uuid.UUID,
    error: str,
    retry_in: float | None = None,
    *,
    retry: bool = True,
    traceback: str | None = None,
    extended: bool = False,
) -> str | None:
    """The job's new state ('queued' or 'dead'), or None when this token no longer holds it.

    With `extended` (a schema of 0.3.0 on) retry and traceback are sent;
    without, they are not (the four-argument call of earlier releases).
    """
    delay = None if retry_in is None else seconds(retry_in)
    if extended:
        params = [job_id, token, error, delay, retry, traceback]
        row = await (await conn.execute(FAIL_RETRY, params)).fetchone()
    else:
        row = await (await conn.execute(FAIL, [job_id, token, error, delay])).fetchone()
    return None if row is None else row[0]


RELEASE = "SELECT taskboard.release(job_id => %s, token => %s, delay => %s)"


async def release(
    conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, delay: float = 0.0
) -> bool:
    """True when the job was handed back uncounted; False when this token no longer holds it."""
    row = await (await conn.execute(RELEASE, [job_id, token, seconds(delay)])).fetchone()
    return bool(row and row[0])


LEASE_STATE = "SELECT taskboard.lease_state(job_id => %s, token => %s)"


async def lease_state(conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID) -> str:
    """'held', 'expired', 'completed' or 'lost'."""
    row = await (await conn.execute(LEASE_STATE, [job_id, token])).fetchone()
    assert row is not None
    return str(row[0])


async def transaction_isolation(conn: psycopg.AsyncConnection[Any]) -> str:
    row = await (await conn.execute("SHOW transaction_isolation")).fetchone()
    assert row is not None
    return str(row[0])


async def transaction_id(conn: psycopg.AsyncConnection[Any]) -> int:
    """The id of the connection's open transaction (assigning one if it has none yet)."""
    row = await (await conn.execute("SELECT pg_current_xact_id()::text::bigint")).fetchone()
    assert row is not None
    return int(row[0])


async def transaction_id_if_assigned(conn: psycopg.AsyncConnection[Any]) -> int | None:
    """The id of the connection's current transaction, None when it has none."""
    row = await (
        await conn.execute("SELECT pg_current_xact_id_if_assigned()::text::bigint")
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


async def set_lock_timeout(conn: psycopg.AsyncConnection[Any], seconds_: float) -> None:
    """Make the session's statements give up waiting for a row lock after `seconds_`."""
    await conn.execute(
        "SELECT pg_catalog.set_config('lock_timeout', %s, false)", [f"{int(seconds_ * 1000)}ms"]
    )


CLOCK = "SELECT pg_catalog.clock_timestamp()"


async def clock(conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
    """The database's clock now: where a periodic schedule's slots are counted from."""
    row = await (await conn.execute(CLOCK)).fetchone()
    assert row is not None
    value: dt.datetime = row[0]
    return value


ENQUEUE_PERIODIC = """
SELECT taskboard.enqueue_periodic(
    schedule => %s, slot => %s, task => %s, payload => %s::jsonb, queue => %s,
    priority => %s, max_attempts => %s)
"""


async def enqueue_periodic(
    conn: psycopg.AsyncConnection[Any],
    schedule: str,
    slot: dt.datetime,
    task: str,
    payload_json: str,
    queue: str,
    priority: int,
    max_attempts: int,
) -> int | None:
    """The id of the job of `schedule`'s `slot`; None when that slot or a later one already
    has its job."""
    params = [schedule, slot, task, payload_json, queue, priority, max_attempts]
    row = await (await conn.execute(ENQUEUE_PERIODIC, params)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


class Queries:
    """The SQL calls a worker makes, as one object handed to it.

    Every method passes its arguments to the taskboard.* function of the
    same name and returns the answer unchanged. A subclass can observe or
    delay a call (the soak and the tests do); it must not change answers.

    `schema` is the release (X, Y, Z) of the schema the worker found at
    start-up (`use_schema`): calls that a later release added or extended
    are made in their newer form only where the schema has it. Until told,
    the oldest supported release.
    """

    schema: tuple[int, ...] = (0, 1, 0)

    claim_query: str = CLAIM
    complete_many_then_claim_query: str = COMPLETE_MANY_THEN_CLAIM

    def use_schema(self, release: tuple[int, ...]) -> None:
        self.schema = release
        extras = claimed_extras(release)
        self.claim_query = claim_query(extras)
        self.complete_many_then_claim_query = complete_many_then_claim_query(extras)

    @property
    def fail_takes_retry(self) -> bool:
        """Whether fail takes retry (false: dead at once) and traceback on this schema."""
        return self.schema >= FAIL_RETRY_SINCE

    async def version(self, conn: psycopg.AsyncConnection[Any]) -> str | None:
        return await aversion(conn)

    async def listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await listen(conn)

    async def claim(
        self, conn: psycopg.AsyncConnection[Any], queue: str, worker: str, batch: int, lease: float
    ) -> list[Claimed]:
        return await claim(conn, queue, worker, batch, lease, query=self.claim_query)

    async def renew_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        lease: float,
    ) -> list[dt.datetime | None]:
        return await renew_many(conn, job_ids, tokens, lease)

    async def renew(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, lease: float
    ) -> dt.datetime | None:
        return await renew(conn, job_id, token, lease)

    async def complete(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_id: int,
        token: uuid.UUID,
        result_json: str | None,
    ) -> bool:
        return await complete(conn, job_id, token, result_json)

    async def complete_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
    ) -> list[tuple[int, bool]]:
        return await complete_many(conn, job_ids, tokens, results_json)

    async def complete_many_then_claim(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
        claim_args: tuple[str, str, int, float],
    ) -> tuple[list[tuple[int, bool]], list[Claimed]]:
        return await complete_many_then_claim(
            conn,
            job_ids,
            tokens,
            results_json,
            claim_args,
            query=self.complete_many_then_claim_query,
        )

    async def fail(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_id: int,
        token: uuid.UUID,
        error: str,
        retry_in: float | None = None,
        retry: bool = True,
        traceback: str | None = None,
    ) -> str | None:
        """fail; on a schema older than 0.3.0 without retry and traceback (see
        fail_takes_retry: the caller decides what a retry of False then means)."""
        return await fail(
            conn,
            job_id,
            token,
            error,
            retry_in,
            retry=retry,
            traceback=traceback,
            extended=self.fail_takes_retry,
        )

    async def release(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, delay: float
    ) -> bool:
        return await release(conn, job_id, token, delay)

    async def lease_state(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID
    ) -> str:
        return await lease_state(conn, job_id, token)

    async def prune(self, conn: psycopg.AsyncConnection[Any], older_than: float, batch: int) -> int:
        """One prune call: how many finished jobs it deleted (at most `batch`)."""
        row = await (await conn.execute(PRUNE, prune_params(older_than, batch))).fetchone()
        return int(row[0]) if row else 0

    async def clock(self, conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
        """The database's clock_timestamp(), the one clock periodic slots are counted on."""
        return await clock(conn)

    async def enqueue_periodic(
        self,
        conn: psycopg.AsyncConnection[Any],
        schedule: str,
        slot: dt.datetime,
        task: str,
        payload_json: str,
        queue: str,
        priority: int,
        max_attempts: int,
    ) -> int | None:
        return await enqueue_periodic(
            conn, schedule, slot, task, payload_json, queue, priority, max_attempts
        )


# -- managing jobs ---------------------------------------------------------------

FINISHED_STATES = ("succeeded", "dead", "cancelled")
INT8_MIN, INT8_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class JobInfo:
    """One taskboard.job_info row: what a person may see of a job, never its token.

    `errors` lists each failed attempt as {error, attempt, worker, at} (and a
    `traceback` where the worker sent one). `started_at` is when the last
    claim started the job; None before it was claimed, and on schemas older
    than 0.3.0. `payload` is what the job was enqueued with and `fence` the
    number of its latest claim (0 before the first); both None on schemas
    older than 0.4.0.
    """

    job_id: int
    queue: str
    task: str
    state: str
    attempt: int
    max_attempts: int
    priority: int
    run_at: dt.datetime
    created_at: dt.datetime
    finished_at: dt.datetime | None
    result: Any
    errors: list[dict[str, Any]]
    started_at: dt.datetime | None = None
    payload: Any = None
    fence: int | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    def as_json(self) -> dict[str, Any]:
        """The job as JSON-ready values: times in ISO 8601."""
        return {
            name: value.isoformat() if isinstance(value, dt.datetime) else value
            for name, value in (
                (field, getattr(self, field)) for field in self.__dataclass_fields__
            )
        }


def job_info(row: Mapping[str, Any]) -> JobInfo | None:
    """A JobInfo from a job_info row read by name; None for get_job's row of NULLs."""
    if row["job_id"] is None:
        return None
    return JobInfo(
        job_id=row["job_id"],
        queue=row["queue"],
        task=row["task"],
        state=row["state"],
        attempt=row["attempt"],
        max_attempts=row["max_attempts"],
        priority=row["priority"],
        run_at=row["run_at"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        result=row["result"],
        errors=list(row["errors"] or []),
        started_at=row.get("started_at"),
        payload=row.get("payload"),
        fence=row.get("fence"),
    )


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


def _default_loaders(cur: psycopg.Cursor[Any] | psycopg.AsyncCursor[Any]) -> None:
    """Decode json, jsonb and timestamptz on `cur` as psycopg does by default,
    whatever the caller's connection registered (Django loads jsonb as text and,
    without USE_TZ, timestamptz as naive datetimes)."""
    for name, loader in DEFAULT_LOADERS:
        cur.adapters.register_loader(name, loader)


DEFAULT_LOADERS: tuple[tuple[str, type[Loader]], ...] = (
    ("json", JsonLoader),
    ("jsonb", JsonbLoader),
    ("timestamptz", TimestamptzLoader),
)

GET_JOB = "SELECT * FROM taskboard.get_job(job_id => %(job_id)s)"
FIND_JOBS = """
SELECT * FROM taskboard.find_jobs(queue => %(queue)s, state => %(state)s, task => %(task)s,
                                  after_id => %(after_id)s, max_rows => %(max_rows)s)
"""
CANCEL = "SELECT taskboard.cancel(job_id => %(job_id)s)"
RETRY = "SELECT taskboard.retry(job_id => %(job_id)s)"
PRUNE = "SELECT taskboard.prune(older_than => %(older_than)s, batch => %(batch)s)"


def get_job(conn: psycopg.Connection[Any], params: dict[str, Any]) -> JobInfo | None:
    with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        row = cur.execute(GET_JOB, params).fetchone()
    return None if row is None else job_info(row)


async def aget_job(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> JobInfo | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        row = await (await cur.execute(GET_JOB, params)).fetchone()
    return None if row is None else job_info(row)


def find_jobs(conn: psycopg.Connection[Any], params: dict[str, Any]) -> list[JobInfo]:
    with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        rows = cur.execute(FIND_JOBS, params).fetchall()
    return [info for info in map(job_info, rows) if info is not None]


async def afind_jobs(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> list[JobInfo]:
    async with conn.cursor(row_factory=dict_row) as cur:
        _default_loaders(cur)
        rows = await (await cur.execute(FIND_JOBS, params)).fetchall()
    return [info for info in map(job_info, rows) if info is not None]


def cancel(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    return _changed(conn, CANCEL, params)


async def acancel(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    return await _achanged(conn, CANCEL, params)


def retry(conn: psycopg.Connection[Any], params: dict[str, Any]) -> bool:
    return _changed(conn, RETRY, params)


async def aretry(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> bool:
    return await _achanged(conn, RETRY, params)


def prune(conn: psycopg.Connection[Any], params: dict[str, Any]) -> int:
    """Batches of prune until one deletes fewer than a batch; how many in all."""
    total = 0
    while True:
        deleted = int(_value(conn, PRUNE, params) or 0)
        total += deleted
        if deleted < params["batch"]:
            return total


async def aprune(conn: psycopg.AsyncConnection[Any], params: dict[str, Any]) -> int:
    total = 0
    while True:
        deleted = int(await _avalue(conn, PRUNE, params) or 0)
        total += deleted
        if deleted < params["batch"]:
            return total


# -- start-up checks -------------------------------------------------------------


async def can_work(conn: psycopg.AsyncConnection[Any]) -> bool:
    """True when the session's user may call claim (the worker role's grant)."""
    row = await (
        await conn.execute(
            "SELECT has_function_privilege("
            "'taskboard.claim(text, text, integer, interval)', 'EXECUTE')"
        )
    ).fetchone()
    return bool(row and row[0])


# Who this session is and which Taskboard roles it has the rights of, from the
# catalogs alone (any login may read them, with or without USAGE on the schema).
# The prefix is the schema owner's name less `_owner` (NULL without the schema, or
# for an owner named otherwise); the login comes quoted as SQL would need it.
LOGIN_ROLES = """
SELECT pg_catalog.quote_ident(current_user) AS login,
       o.prefix,
       ARRAY(SELECT k.kind
               FROM unnest(ARRAY['producer', 'worker', 'admin']) WITH ORDINALITY AS k(kind, n)
               JOIN pg_catalog.pg_roles AS r ON r.rolname = o.prefix || '_' || k.kind
              WHERE pg_catalog.pg_has_role(r.oid, 'USAGE')
              ORDER BY k.n) AS holds
  FROM (SELECT (SELECT pg_catalog.substring(pg_catalog.pg_get_userbyid(n.nspowner),
                                            '^([a-z_][a-z0-9_]*)_owner$')
                  FROM pg_catalog.pg_namespace AS n
                 WHERE n.nspname = 'taskboard') AS prefix) AS o
"""


@dataclass(frozen=True, slots=True)
class LoginRoles:
    """The session's login and the Taskboard roles whose rights it has."""

    login: str  # quoted as an identifier where SQL needs it
    prefix: str | None  # of the schema's roles (owner PREFIX_owner); None when unknown
    holds: tuple[str, ...]  # of producer, worker, admin


def _login_roles(row: Sequence[Any] | None) -> LoginRoles:
    assert row is not None
    login, prefix, holds = row
    return LoginRoles(str(login), prefix, tuple(holds))


def login_roles(conn: psycopg.Connection[Any]) -> LoginRoles:
    """Which Taskboard roles the session's login may use; works for any login."""
    with conn.cursor(row_factory=tuple_row) as cur:
        return _login_roles(cur.execute(LOGIN_ROLES).fetchone())


async def alogin_roles(conn: psycopg.AsyncConnection[Any]) -> LoginRoles:
    """`login_roles` on an AsyncConnection."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(LOGIN_ROLES)
        return _login_roles(await cur.fetchone())


async def current_user(conn: psycopg.AsyncConnection[Any]) -> str:
    row = await (await conn.execute("SELECT current_user")).fetchone()
    assert row is not None
    return str(row[0])


async def probe_prepared(conn: psycopg.AsyncConnection[Any]) -> None:
    """One execution of a statement psycopg prepares at once (prepare=True)."""
    await conn.execute("SELECT taskboard.version()", prepare=True)


# -- the dashboard's reads (schema 0.4.0 and later) ------------------------------

# Each queue now, with the database's clock as it read them (for ages).
QUEUE_OVERVIEW = """
SELECT o.*, pg_catalog.clock_timestamp() AS read_at
  FROM taskboard.queue_overview(recent => %(recent)s) AS o
"""
JOB_ACTIVITY = "SELECT * FROM taskboard.job_activity(recent => %(recent)s)"
# The schedules with the state of each one's last job.
SCHEDULES_WITH_LAST_JOB = """
SELECT s.schedule, s.last_slot, s.last_job_id,
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


async def _arows(
    conn: psycopg.AsyncConnection[Any], query: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        return list(await cur.fetchall())


async def aqueue_overview(
    conn: psycopg.AsyncConnection[Any], recent: dt.timedelta
) -> list[dict[str, Any]]:
    """queue_overview's rows by column name, each with `read_at`, the database's clock."""
    return await _arows(conn, QUEUE_OVERVIEW, {"recent": recent})


async def ajob_activity(
    conn: psycopg.AsyncConnection[Any], recent: dt.timedelta
) -> list[dict[str, Any]]:
    """job_activity's rows by column name: per minute and queue, oldest first."""
    return await _arows(conn, JOB_ACTIVITY, {"recent": recent})


async def aschedules(conn: psycopg.AsyncConnection[Any]) -> list[dict[str, Any]]:
    """taskboard.schedules with `last_job_state`, by column name."""
    return await _arows(conn, SCHEDULES_WITH_LAST_JOB)


async def aallowed_actions(conn: psycopg.AsyncConnection[Any]) -> dict[str, bool]:
    """For each action the dashboard offers, whether this login may take it."""
    rows = await _arows(conn, ALLOWED_ACTIONS)
    return {name: bool(value) for name, value in rows[0].items()}
