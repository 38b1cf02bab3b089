"""Sqitch: every call the driver makes to it, on the project shipped as taskboard/db.

`taskboard migrate` and the demo deploy through here; nothing else runs
sqitch. The database password travels in SQITCH_PASSWORD, never on
sqitch's command line (which `ps` shows).

A fresh database is installed in two steps, because the v0.1.0 scripts
need a superuser and name the `taskboard_` roles: the first release comes
from `taskboard sql` (any prefix, a CREATEROLE login is enough) and is
recorded in Sqitch's registry with --log-only; Sqitch then deploys every
later change itself, verified. A database already on a release is simply
upgraded by Sqitch, with the prefix its schema owner tells.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import psycopg

from taskboard import install
from taskboard.errors import ConfigError, TaskboardError

SQITCH_HINT = (
    "sqitch is not installed or not on PATH: install it "
    "(on Debian: apt-get install sqitch libdbd-pg-perl)"
)


class MigrateError(TaskboardError):
    """Sqitch cannot run or refused: it is missing, the package ships no project, a step failed."""


def sqitch_target(database_url: str) -> tuple[str, dict[str, str]]:
    """The Sqitch target for `database_url` and the environment carrying its password.

    Raises ConfigError unless the URL is a postgresql:// URI.
    """
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError("TASKBOARD_DATABASE_URL must be a postgresql://... URI for migrate")
    env: dict[str, str] = {}
    netloc = parts.netloc
    if parts.password is not None:
        env["SQITCH_PASSWORD"] = unquote(parts.password)
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}@{hostport}"
    uri = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return "db:pg:" + uri.split(":", 1)[1], env


def sqitch(
    database_url: str, *command: str, capture: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run `sqitch COMMAND... --target <database_url>` in the shipped project.

    Returns the finished process (the caller reads its returncode); with
    `capture`, its output is in stdout/stderr instead of the terminal.
    Raises MigrateError when sqitch or the project is missing, ConfigError
    for a URL Sqitch cannot take.
    """
    target, password_env = sqitch_target(database_url)
    executable = shutil.which("sqitch")
    if executable is None:
        raise MigrateError(SQITCH_HINT)
    return subprocess.run(
        [executable, *command, "--target", target],
        cwd=install.shipped_sqitch_project(),
        env={**os.environ, **password_env},
        capture_output=capture,
        text=True,
        check=False,
    )


def deploy(database_url: str, connect_options: Mapping[str, Any], prefix: str | None = None) -> str:
    """Install Taskboard in the database, or upgrade it, with Sqitch verifying every step.

    `prefix` names the roles of a fresh install (default taskboard); an
    installed database keeps its own, and a different one is refused.
    Returns what was done, Sqitch's report included. Raises MigrateError
    when a step fails, with its error in one line.
    """
    sqitch_target(database_url)  # a URL Sqitch cannot take is refused before anything runs
    report = ""
    with psycopg.connect(database_url, **connect_options) as conn:
        owner, recorded = installed(conn)
        if owner is None and not recorded:
            prefix = install.check_prefix(prefix or install.DEFAULT_PREFIX)
            report = install_first_release(database_url, conn, prefix)
        elif owner is not None and not recorded:
            raise MigrateError(
                "the taskboard schema exists but Sqitch has no record of it (installed with "
                "`taskboard sql`?): upgrade it with `taskboard sql --from RELEASE`"
            )
        elif prefix is None:
            prefix = owner.removesuffix("_owner") if owner else None
        elif owner is not None and owner != f"{prefix}_owner":
            raise MigrateError(
                f"schema taskboard is owned by {owner}, not {prefix}_owner: "
                "a database keeps the prefix it was installed with"
            )
    done = sqitch(
        database_url,
        "deploy",
        "--verify",
        "--set",
        f"prefix={prefix or install.DEFAULT_PREFIX}",
        capture=True,
    )
    return report + succeeded(done).stdout


def revert(database_url: str, connect_options: Mapping[str, Any]) -> str:
    """Revert every change (`sqitch revert -y`), with the prefix the schema's owner names.

    Returns Sqitch's report; raises MigrateError, in one line, when it fails.
    """
    sqitch_target(database_url)
    with psycopg.connect(database_url, **connect_options) as conn:
        owner, _ = installed(conn)
    prefix = owner.removesuffix("_owner") if owner else install.DEFAULT_PREFIX
    return succeeded(
        sqitch(database_url, "revert", "-y", "--set", f"prefix={prefix}", capture=True)
    ).stdout


def install_first_release(database_url: str, conn: psycopg.Connection[Any], prefix: str) -> str:
    """Install the first release from `taskboard sql` and record it in Sqitch's registry."""
    first = install.releases(install.shipped_sqitch_project())[0]
    try:
        conn.execute(install.script(prefix, until=first), prepare=False)
    except psycopg.Error as exc:
        raise MigrateError(f"installing release {first} failed: {exc}") from exc
    done = sqitch(
        database_url, "deploy", "--log-only", "--no-verify", "--to", f"@v{first}", capture=True
    )
    return (
        f"Installed release {first} (roles {prefix}_*) in one transaction; "
        f"Sqitch records it:\n{succeeded(done).stdout}"
    )


def installed(conn: psycopg.Connection[Any]) -> tuple[str | None, bool]:
    """The owner of the taskboard schema (None when absent), and whether Sqitch recorded a deploy."""
    owner = conn.execute(
        "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'taskboard'"
    ).fetchone()
    registry = conn.execute("SELECT to_regclass('sqitch.changes') IS NOT NULL").fetchone()
    recorded = False
    if registry is not None and registry[0]:
        row = conn.execute(
            "SELECT EXISTS (SELECT FROM sqitch.changes WHERE project = 'taskboard')"
        ).fetchone()
        recorded = bool(row and row[0])
    return (owner[0] if owner else None), recorded


def succeeded(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`done` when Sqitch succeeded; MigrateError with its first error line otherwise."""
    if done.returncode == 0:
        return done
    output = f"{done.stdout}\n{done.stderr}"
    error = ERROR_LINE.search(output)
    raise MigrateError(
        f"sqitch failed: {error[1]}" if error else f"sqitch failed: {output.strip()}"
    )


# psql's report of the statement that failed, as Sqitch passes it on.
ERROR_LINE = re.compile(r"(?:psql:[^:]*:\d+: )?(?:ERROR|FATAL):\s+(.*)")
