"""The worker's calls: claim, renew, complete, fail, release, and its start-up checks;
`Queries` is the object a worker makes them through.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row, tuple_row

from taskboard.sql.admin_async import JobInfo, aget_job, aprune_batch
from taskboard.sql.parameters import prune_params, seconds
from taskboard.sql.session_async import aversion

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
    # The W3C trace context its enqueuer stored; None when none.
    trace_context: dict[str, str] | None = None
    # How long the job had been runnable when claimed, database clock.
    waited: dt.timedelta | None = None


def claimed_at(row: Any, at: Mapping[str, Any], queue: str = "") -> Claimed:
    """A Claimed of `queue` from a claim row whose column `name` is `row[at[name]]` (a
    position in the worker's own queries, read as tuples), its payload decoded here.
    A column `at` does not name is None."""
    why: str | None = None
    try:
        payload = json.loads(row[at["payload"]])
    except (ValueError, RecursionError) as exc:
        why = f"the payload cannot be decoded: {type(exc).__name__}: {str(exc)[:200]}"
        payload = None
    fence = at.get("fence")
    trace_context = at.get("trace_context")
    if trace_context is not None:
        trace_context = row[trace_context]
    waited = at.get("waited")
    return Claimed(
        job_id=row[at["job_id"]],
        token=row[at["token"]],
        task=row[at["task"]],
        payload=payload,
        attempt=row[at["attempt"]],
        lease_expires_at=row[at["lease_expires_at"]],
        idempotency_key=row[at["idempotency_key"]],
        fence=None if fence is None else row[fence],
        payload_error=why,
        queue=queue,
        trace_context=trace_context if isinstance(trace_context, dict) else None,
        waited=None if waited is None else row[waited],
    )


# -- workers -------------------------------------------------------------------

# The columns of taskboard.claimed after CLAIMED_COLUMNS, in order: (name, type).
CLAIMED_EXTRAS = (
    ("fence", "bigint"),
    ("trace_context", "jsonb"),
    ("waited", "interval"),
)

# The payload comes as text and is decoded per job (sql.claimed_at): one that
# Python cannot decode fails its own job, not the whole claim. Rows come as
# tuples, read by the position of each column's name (claimed_positions),
# without a dict a row.
CLAIMED_COLUMNS = (
    "job_id, token, task, payload::text AS payload, attempt, lease_expires_at, idempotency_key"
)
CLAIMED_NAMES = (
    "job_id",
    "token",
    "task",
    "payload",
    "attempt",
    "lease_expires_at",
    "idempotency_key",
)
CLAIM_CALL = "taskboard.claim(queue => %s, worker => %s, batch => %s, lease => %s)"


def claimed_positions(names: Sequence[str], extras: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Each column's position in a row of `names` then `extras`."""
    return {name: i for i, name in enumerate([*names, *(name for name, _ in extras)])}


# complete_many_then_claim's columns: complete_many's answer, then claim's row.
COMPLETED_THEN_CLAIMED_NAMES = ("job_id", "completed", *CLAIMED_NAMES[1:])


def claim_query(extras: Sequence[tuple[str, str]]) -> str:
    columns = "".join(f", {name}" for name, _ in extras)
    return f"SELECT {CLAIMED_COLUMNS}{columns} FROM {CLAIM_CALL}"


CLAIM = claim_query(CLAIMED_EXTRAS)


RENEW_MANY = """
SELECT job_id, lease_expires_at
  FROM taskboard.renew_many(job_ids => %s::bigint[], tokens => %s::uuid[], lease => %s)
"""

RENEW = "SELECT taskboard.renew(job_id => %s, token => %s, lease => %s)"

COMPLETE = "SELECT taskboard.complete(job_id => %s, token => %s, result => %s::jsonb)"

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


# Both calls in one statement: complete_many's rows first (token NULL), then
# claim's. One statement is one round trip and one transaction: if
# complete_many raises, no claim is made and nothing commits.
def complete_many_then_claim_query(extras: Sequence[tuple[str, str]]) -> str:
    nulls = "".join(f", NULL::{type_} AS {name}" for name, type_ in extras)
    columns = "".join(f", k.{name}" for name, _ in extras)
    return f"""
SELECT c.job_id, c.completed, NULL::uuid AS token, NULL::text AS task, NULL::text AS payload,
       NULL::integer AS attempt, NULL::timestamptz AS lease_expires_at,
       NULL::uuid AS idempotency_key{nulls}
  FROM taskboard.complete_many(job_ids => %s::bigint[], tokens => %s::uuid[], results => %s::jsonb[]) AS c
UNION ALL
SELECT k.job_id, NULL, k.token, k.task, k.payload::text, k.attempt, k.lease_expires_at,
       k.idempotency_key{columns}
  FROM taskboard.claim(queue => %s, worker => %s, batch => %s, lease => %s) AS k
"""


COMPLETE_MANY_THEN_CLAIM = complete_many_then_claim_query(CLAIMED_EXTRAS)


FAIL = (
    "SELECT taskboard.fail(job_id => %s, token => %s, error => %s, retry_in => %s,"
    " retry => %s, traceback => %s)"
)

RELEASE = "SELECT taskboard.release(job_id => %s, token => %s, delay => %s)"

LEASE_STATE = "SELECT taskboard.lease_state(job_id => %s, token => %s)"

CLOCK = "SELECT pg_catalog.clock_timestamp()"

# A renamed schedule's former names carry its slots over.
ENQUEUE_PERIODIC = """
SELECT taskboard.enqueue_periodic(
    schedule => %s, slot => %s, task => %s, payload => %s::jsonb, queue => %s,
    priority => %s, max_attempts => %s, previous_names => %s::text[])
"""


class Queries:
    """The SQL calls a worker makes, as one object handed to it: the only place each
    is written.

    Every method passes its arguments to the taskboard.* function of the
    same name and returns the answer unchanged. A subclass can observe or
    delay a call (the soak and the tests do); it must not change answers.
    """

    claim_query: str = CLAIM
    complete_many_then_claim_query: str = COMPLETE_MANY_THEN_CLAIM
    claim_at: dict[str, int] = claimed_positions(CLAIMED_NAMES, CLAIMED_EXTRAS)
    complete_many_then_claim_at: dict[str, int] = claimed_positions(
        COMPLETED_THEN_CLAIMED_NAMES, CLAIMED_EXTRAS
    )

    async def version(self, conn: psycopg.AsyncConnection[Any]) -> str | None:
        """The schema's release, or None when the taskboard schema is not installed."""
        return await aversion(conn)

    async def listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(f"LISTEN {CHANNEL}")

    async def claim(
        self, conn: psycopg.AsyncConnection[Any], queue: str, worker: str, batch: int, lease: float
    ) -> list[Claimed]:
        """claim's rows as Claimed."""
        at = self.claim_at
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(self.claim_query, [queue, worker, batch, seconds(lease)])
            return [claimed_at(row, at, queue) for row in await cur.fetchall()]

    async def renew_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        lease: float,
    ) -> list[dt.datetime | None]:
        """New deadline per job, in input order; None where the token is no longer current
        or its lease expired."""
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(RENEW_MANY, [list(job_ids), list(tokens), seconds(lease)])
            return [row["lease_expires_at"] for row in await cur.fetchall()]

    async def renew(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, lease: float
    ) -> dt.datetime | None:
        """The new deadline, or None when the token is no longer current or its lease
        expired."""
        row = await (await conn.execute(RENEW, [job_id, token, seconds(lease)])).fetchone()
        return None if row is None else row[0]

    async def complete(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_id: int,
        token: uuid.UUID,
        result_json: str | None,
    ) -> bool:
        """True when this token completed the job; False when it no longer holds it."""
        row = await (await conn.execute(COMPLETE, [job_id, token, result_json])).fetchone()
        return bool(row and row[0])

    async def complete_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
    ) -> list[tuple[int, bool]]:
        """(job_id, completed) in input order; completed is False where the token is stale."""
        params = complete_many_params(job_ids, tokens, results_json)
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(COMPLETE_MANY, params)
            return [(job_id, bool(completed)) for job_id, completed in await cur.fetchall()]

    async def complete_many_then_claim(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
        claim_args: tuple[str, str, int, float],
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
        at = self.complete_many_then_claim_at
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(self.complete_many_then_claim_query, params)
            rows = await cur.fetchall()
        job_id, completed_, token = at["job_id"], at["completed"], at["token"]
        # complete_many's rows are those without a token.
        completed = {row[job_id]: bool(row[completed_]) for row in rows if row[token] is None}
        done = [(job_id, completed[job_id]) for job_id in job_ids]
        return done, [claimed_at(row, at, queue) for row in rows if row[token] is not None]

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
        """The job's new state ('queued' or 'dead'), or None when this token no longer
        holds it."""
        delay = None if retry_in is None else seconds(retry_in)
        params = [job_id, token, error, delay, retry, traceback]
        row = await (await conn.execute(FAIL, params)).fetchone()
        return None if row is None else row[0]

    async def release(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, delay: float
    ) -> bool:
        """True when the job was handed back uncounted; False when this token no longer
        holds it."""
        row = await (await conn.execute(RELEASE, [job_id, token, seconds(delay)])).fetchone()
        return bool(row and row[0])

    async def lease_state(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID
    ) -> str:
        """'held', 'expired', 'completed' or 'lost'."""
        row = await (await conn.execute(LEASE_STATE, [job_id, token])).fetchone()
        assert row is not None
        return str(row[0])

    async def get_job(self, conn: psycopg.AsyncConnection[Any], job_id: int) -> JobInfo | None:
        """The job as taskboard.get_job shows it, None for an unknown id: what a refused
        renewal asks to say why (a cancel, a later claim), never on the common path."""
        return await aget_job(conn, {"job_id": job_id})

    async def prune(self, conn: psycopg.AsyncConnection[Any], older_than: float, batch: int) -> int:
        """One prune call: how many finished jobs it deleted (at most `batch`)."""
        return await aprune_batch(conn, prune_params(older_than, batch))

    async def clock(self, conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
        """The database's clock_timestamp(), the one clock periodic slots are counted on."""
        row = await (await conn.execute(CLOCK)).fetchone()
        assert row is not None
        value: dt.datetime = row[0]
        return value

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
        previous_names: Sequence[str] = (),
    ) -> int | None:
        """The id of the job of `schedule`'s `slot`; None when that slot or a later one
        already has its job.

        Raises psycopg.errors.UniqueViolation (23505) when the slot, or a later
        one, was taken for another task or queue.
        """
        params = [schedule, slot, task, payload_json, queue, priority, max_attempts]
        row = await (
            await conn.execute(ENQUEUE_PERIODIC, [*params, list(previous_names)])
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])


# The calls of Queries as functions (the benchmarks and the inline test worker call
# them so).
_QUERIES = Queries()
listen = _QUERIES.listen
claim = _QUERIES.claim
renew_many = _QUERIES.renew_many
renew = _QUERIES.renew
complete = _QUERIES.complete
complete_many = _QUERIES.complete_many
complete_many_then_claim = _QUERIES.complete_many_then_claim
fail = _QUERIES.fail
release = _QUERIES.release
lease_state = _QUERIES.lease_state
clock = _QUERIES.clock
enqueue_periodic = _QUERIES.enqueue_periodic


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


async def prepare_claimer(conn: psycopg.AsyncConnection[Any], lock_timeout: float) -> None:
    """Set up a control connection: set_lock_timeout, and a claim cursor kept per queue
    (taskboard.claim_cursor = on: the claims of a busy queue take the jobs after the
    session's last ones, and walk from the head of the queue every 200 ms, up to 2 s
    while walks are slow)."""
    await conn.execute(
        "SELECT pg_catalog.set_config('lock_timeout', %s, false),"
        " pg_catalog.set_config('taskboard.claim_cursor', 'on', false)",
        [f"{int(lock_timeout * 1000)}ms"],
    )


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


async def current_user(conn: psycopg.AsyncConnection[Any]) -> str:
    row = await (await conn.execute("SELECT current_user")).fetchone()
    assert row is not None
    return str(row[0])


async def probe_prepared(conn: psycopg.AsyncConnection[Any]) -> None:
    """One execution of a statement psycopg prepares at once (prepare=True)."""
    await conn.execute("SELECT taskboard.version()", prepare=True)
