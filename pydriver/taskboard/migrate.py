"""Sqitch: every call the driver makes to it, on the project shipped as taskboard/db.

`taskboard migrate` and the demo deploy through here; nothing else runs
sqitch. The database password travels in SQITCH_PASSWORD, never on
sqitch's command line (which `ps` shows).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from taskboard.errors import ConfigError, TaskboardError

SQITCH_HINT = (
    "sqitch is not installed or not on PATH: install it "
    "(on Debian: apt-get install sqitch libdbd-pg-perl)"
)


class MigrateError(TaskboardError):
    """Sqitch cannot run: it is missing, or the package ships no Sqitch project."""


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


def shipped_sqitch_project() -> Path:
    """The Sqitch project inside the installed package (taskboard/db)."""
    project = resources.files("taskboard") / "db"
    if not isinstance(project, Path) or not (project / "sqitch.plan").is_file():
        raise MigrateError(
            f"the taskboard package ships no Sqitch project at {project}: reinstall it"
        )
    return project


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
        cwd=shipped_sqitch_project(),
        env={**os.environ, **password_env},
        capture_output=capture,
        text=True,
        check=False,
    )
