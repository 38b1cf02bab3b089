"""Start-up: wait for the database, then make sure this worker can work there.

A database that is down or starting is waited for, one log line per
attempt with a capped backoff. Everything else that would stop the worker
later is found now and raised as one StartupError line naming the fix: a
server that refuses the login, a database without the schema or with a
version this driver does not support, a login without the worker role,
and prepared statements lost behind a transaction pooler.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import psycopg
from psycopg import errors as pgerrors

from taskboard.connections import Deadline, connect_failure
from taskboard.errors import StartupError, missing_role
from taskboard.settings import Settings
from taskboard.sql import schema as sql_schema
from taskboard.sql import session_async
from taskboard.sql import worker as sql_worker
from taskboard.sql.schema import SUPPORTED_SCHEMA_VERSIONS, Schema, schema_of
from taskboard.worker.outcomes import describe
from taskboard.worker.retry import Backoff, sleep_unless_set

log = logging.getLogger("taskboard.worker")

__all__ = ["SUPPORTED_SCHEMA_VERSIONS", "check_database", "schema_supported"]
WORKER_ROLE_KIND = "worker"  # the role a worker's login needs (errors.ROLE_KINDS)
# Enough executions of one statement for psycopg to prepare it and reuse it
# across transactions: behind a transaction pooler that loses it, one fails.
PREPARED_PROBES = 3
# SQLSTATE classes that mean "not up yet", as opposed to "will never work".
NOT_UP_YET = {"57P03"}  # cannot_connect_now: starting up, shutting down, in recovery


# What a server answers that no waiting cures: libpq reports a refused connection
# without its SQLSTATE, so these are known by the server's words.
REFUSED = re.compile(
    r"FATAL:\s+(?:"
    r'database "[^"]*" does not exist'
    r'|role "[^"]*" does not exist'
    r'|role "[^"]*" is not permitted to log in'
    r"|password authentication failed"
    r"|no pg_hba\.conf entry"
    r"|permission denied for database"
    r")"
)


def _waiting_is_right(exc: psycopg.OperationalError) -> bool:
    """True for a server that is down or not accepting connections yet; False for one that
    refused this login or database, which waiting will not change."""
    sqlstate = getattr(exc, "sqlstate", None)
    if sqlstate is None:
        return REFUSED.search(str(exc)) is None
    return sqlstate in NOT_UP_YET


async def _connect(settings: Settings, stop: asyncio.Event) -> psycopg.AsyncConnection[Any] | None:
    """Connect, waiting while the server is down; None when `stop` was set meanwhile."""
    backoff = Backoff()
    while not stop.is_set():
        try:
            return await psycopg.AsyncConnection.connect(
                settings.database_url,
                **settings.connection_options(application_name=settings.application_name),
            )
        except psycopg.OperationalError as exc:
            if not _waiting_is_right(exc):
                raise StartupError(
                    f"cannot connect to the database: {connect_failure(exc)}"
                ) from None
            delay = backoff.next()
            log.warning(
                "database not reachable (%s); trying again in %.1fs", connect_failure(exc), delay
            )
            await sleep_unless_set(stop, delay)
    return None


async def check_database(
    settings: Settings, queries: sql_worker.Queries, stop: asyncio.Event
) -> Schema | None:
    """Wait for the database, then raise StartupError when this worker cannot work there;
    the database's Schema, or None when `stop` was set meanwhile.

    A server that goes away during the checks is waited for again.
    """
    backoff = Backoff()
    while True:
        conn = await _connect(settings, stop)
        if conn is None:
            return None
        try:
            async with conn, Deadline(conn, settings.deadline):
                return await _check(settings, queries, conn)
        except psycopg.OperationalError as exc:
            if not _waiting_is_right(exc):
                raise
            delay = backoff.next()
            log.warning(
                "database went away during start-up (%s); trying again in %.1fs",
                describe(exc),
                delay,
            )
            await sleep_unless_set(stop, delay)


def schema_supported(version: str) -> bool:
    """Whether this driver works with schema release `version` (X.Y.Z)."""
    return sql_schema.supported(version)


async def _check(
    settings: Settings, queries: sql_worker.Queries, conn: psycopg.AsyncConnection[Any]
) -> Schema:
    """The database's Schema, once every check passed."""
    try:
        version = await queries.version(conn)
    except pgerrors.InsufficientPrivilege as exc:  # no USAGE on the schema: no role at all
        refusal = exc.diag.message_primary or str(exc)
        raise StartupError(await _lacking_worker_role(conn, refusal)) from None
    schema = schema_of(version)
    if not await sql_worker.can_work(conn):
        user = await sql_worker.current_user(conn)
        raise StartupError(await _lacking_worker_role(conn, f"login {user} may not claim jobs"))
    if settings.prepare_threshold is not None:
        await _probe_prepared_statements(conn)
    return schema


async def _lacking_worker_role(conn: psycopg.AsyncConnection[Any], refusal: str) -> str:
    """`refusal`, what this login holds and the GRANT of the worker role it needs."""
    who = await session_async.alogin_roles(conn)
    return missing_role(
        refusal, WORKER_ROLE_KIND, login=who.login, prefix=who.prefix, holds=who.holds
    )


async def _probe_prepared_statements(conn: psycopg.AsyncConnection[Any]) -> None:
    """Run one prepared statement in several transactions; a transaction pooler loses it."""
    try:
        for _ in range(PREPARED_PROBES):
            await sql_worker.probe_prepared(conn)
    except (pgerrors.InvalidSqlStatementName, pgerrors.DuplicatePreparedStatement):
        raise StartupError(
            "prepared statements are lost between transactions (a transaction pooler such as "
            "PgBouncer?): set TASKBOARD_PREPARE_THRESHOLD=none"
        ) from None
