"""Databases for the tests: the Sqitch project, connections as each application role, and the
job clock moved by the table owner."""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg import conninfo
from psycopg import sql as pgsql

from taskboard_dev import devdb

DB_DIR = devdb.project_root() / "db"
TEST_DATABASE_PREFIX = "taskboard_t_"

Sqitch = Callable[..., subprocess.CompletedProcess[str]]


class MakeDatabase(Protocol):
    def __call__(self, *, deploy: bool = False, release: str | None = None) -> str: ...


def run_sqitch(
    url: str, command: str, *args: str, project: Path = DB_DIR
) -> subprocess.CompletedProcess[str]:
    """Run `sqitch COMMAND --target <url> ARGS...` in the Sqitch project
    (db/) and return the finished process, output captured; the caller
    checks returncode."""
    argv = ["sqitch", command, "--target", devdb.sqitch_target(url), *args]
    return subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)


TERMINATE_WAIT_MS = 5000  # pg_terminate_backend waits this long for the backend to exit


def connect(url: str, role: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """Open a connection acting as `role` (taskboard_producer, _worker or _admin)."""
    conn = psycopg.connect(url, autocommit=autocommit)
    conn.execute(f"SET ROLE {role}")
    if not autocommit:
        conn.commit()
    return conn


def value(conn: psycopg.Connection[Any], query: str, params: Sequence[Any] | None = None) -> Any:
    """Return the first column of the first row of `query`."""
    row = conn.execute(query, params).fetchone()
    assert row is not None, query
    return row[0]


def expire(url: str, job_id: int) -> None:
    """Move a job's lease deadline into the past, as the table owner does in tests."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET ROLE taskboard_owner")
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [job_id],
        )


def make_runnable(url: str, job_id: int) -> None:
    """Time passes: the job's run_at moved to now, as the table owner."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE taskboard.jobs SET run_at = clock_timestamp() WHERE id = %s", [job_id])


@contextlib.contextmanager
def login_role(url: str, *grants: str) -> Iterator[str]:
    """The URL of `url`'s database for a new LOGIN role granted `grants` (roles), dropped after.

    The test server trusts local connections, so the role needs no password.
    """
    role = "taskboard_t_login_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(pgsql.SQL("CREATE ROLE {} LOGIN").format(pgsql.Identifier(role)))
        for grant in grants:
            conn.execute(
                pgsql.SQL("GRANT {} TO {}").format(pgsql.Identifier(grant), pgsql.Identifier(role))
            )
    try:
        yield conninfo.make_conninfo(url, user=role)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid, %s) FROM pg_stat_activity WHERE usename = %s",
                [TERMINATE_WAIT_MS, role],
            )
            conn.execute(pgsql.SQL("DROP ROLE {}").format(pgsql.Identifier(role)))


# -- notifications ------------------------------------------------------------------


def heard(listener: psycopg.Connection, producer: psycopg.Connection) -> list[str]:
    """Payloads heard on channel taskboard up to a marker sent now by `producer`.

    Notifications of one session arrive in commit order, so everything the
    producer caused before the marker has arrived when the marker does.
    """
    producer.execute("SELECT pg_notify('taskboard', 'marker')")
    payloads: list[str] = []
    for note in listener.notifies(timeout=10):
        if note.payload == "marker":
            return payloads
        payloads.append(note.payload)
    raise AssertionError(f"the marker never arrived; heard {payloads}")


def listening(url: str) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("LISTEN taskboard")
    return conn


# -- the first release ------------------------------------------------------------------


FIRST_RELEASE = "0.1.0"


def at_first_release(make_database: MakeDatabase, sqitch: Sqitch) -> str:
    """A new database deployed up to the first release: its URL."""
    return make_database(release=FIRST_RELEASE)


def can_use(url: str, login: str, role: str) -> bool:
    """Whether `login` can use the rights of `role`, by SET ROLE or inheritance."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT pg_has_role(%(l)s, %(r)s, 'USAGE') OR (CASE WHEN current_setting("
            "'server_version_num')::int >= 160000 THEN pg_has_role(%(l)s, %(r)s, 'SET') "
            "ELSE pg_has_role(%(l)s, %(r)s, 'MEMBER') END)",
            {"l": login, "r": role},
        ).fetchone()
    assert row is not None
    return bool(row[0])


def settle_checks(url: str) -> None:
    """Claim (from a queue of no job) until taskboard.dependency_checks is empty, as the
    claims of running workers work through it: the edges a dependency's end could not
    see, and ends with dependents left to settle."""
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(200):
            row = conn.execute(
                "SELECT NOT EXISTS (SELECT FROM taskboard.dependency_checks)"
            ).fetchone()
            if row == (True,):
                return
            conn.execute("SELECT count(*) FROM taskboard.claim('settle-checks', 'checker')")
    raise AssertionError("taskboard.dependency_checks did not empty in 200 claims")


def stuck_waiting(url: str) -> list[tuple[int, int]]:
    """Waiting jobs whose count of dependencies left differs from their dependencies
    that have not ended (ids and counts): such a job would wait for good. The edges an
    end could not see (taskboard.dependency_checks) are settled first, as later claims
    settle them."""
    settle_checks(url)
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT j.id, j.dependencies_left FROM taskboard.jobs AS j"
            " WHERE j.state = 'waiting' AND j.dependencies_left <>"
            "       (SELECT count(*) FROM taskboard.job_dependencies AS d"
            "          JOIN taskboard.jobs AS p ON p.id = d.depends_on"
            "         WHERE d.job_id = j.id AND p.state IN ('waiting', 'queued', 'running'))"
        ).fetchall()
    return [(int(r[0]), int(r[1])) for r in rows]
