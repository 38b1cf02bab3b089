"""A throwaway PgBouncer in transaction mode in front of a dev or test server.

Debian's `pgbouncer` package (`make tools` installs it). It listens on a
Unix socket in a fresh directory, trusts local users as the server does,
pools in transaction mode, and resets every server connection after each
transaction (`server_reset_query = DEALLOCATE ALL`,
`server_reset_query_always = 1`): a session's prepared statements are gone
by its next transaction, as they are behind any transaction pooler that
hands sessions other server connections. PgBouncer refuses to run as root:
as root it runs as the user who owns the server's socket directory.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from taskboard_dev.server import ServerError, as_root, flavour, server_user

PORT = 6432  # names the socket file only: no TCP
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10
DEBIAN_PGBOUNCER = "/usr/sbin/pgbouncer"
POOL_SIZE = 4  # server connections per database and user


def executable() -> str:
    """The pgbouncer binary; ServerError saying how to install it when missing."""
    found = shutil.which("pgbouncer") or DEBIAN_PGBOUNCER
    if not Path(found).exists():
        raise ServerError("pgbouncer is not installed: `make tools` (apt-get install pgbouncer)")
    return found


def socket_dir_of(url: str) -> str:
    """The Unix socket directory of a dev server URL (postgresql://...?host=/dir)."""
    hosts = parse_qs(urlsplit(url).query).get("host")
    if not hosts:
        raise ServerError(f"{url} names no socket directory (?host=...)")
    return hosts[0]


def _run_as(server_socket_dir: str) -> str | None:
    if not as_root():
        return None
    owner = pwd.getpwuid(os.stat(server_socket_dir).st_uid).pw_name
    return owner if owner != "root" else server_user(flavour("18"))


class Bouncer:
    """`with Bouncer(server_url) as b:` a PgBouncer in front of that server; `b.url(db)`."""

    def __init__(self, server_url: str) -> None:
        self.server_socket_dir = socket_dir_of(server_url)
        self.dir = Path(tempfile.mkdtemp(prefix="tb-bouncer-"))
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.dir}&port={PORT}"

    def libpq_env(self, database: str) -> dict[str, str]:
        """This process's environment with PGHOST and friends pointing through the pooler."""
        return {
            **os.environ,
            "PGHOST": str(self.dir),
            "PGPORT": str(PORT),
            "PGUSER": "postgres",
            "PGDATABASE": database,
        }

    def start(self) -> None:
        (self.dir / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={self.server_socket_dir} port=5432\n"
            "[pgbouncer]\n"
            f"unix_socket_dir = {self.dir}\n"
            "listen_addr =\n"
            f"listen_port = {PORT}\n"
            "auth_type = trust\n"
            f"auth_file = {self.dir / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {POOL_SIZE}\n"
            "server_reset_query = DEALLOCATE ALL\n"
            "server_reset_query_always = 1\n"
            # psycopg and psql send these at start-up; PgBouncer must not refuse them.
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.dir / 'pgbouncer.log'}\n"
        )
        (self.dir / "users.txt").write_text('"postgres" ""\n')
        argv = [executable(), str(self.dir / "pgbouncer.ini")]
        user = _run_as(self.server_socket_dir)
        if user is not None:
            entry = pwd.getpwnam(user)
            for path in [self.dir, *self.dir.iterdir()]:
                os.chown(path, entry.pw_uid, entry.pw_gid)
            argv = ["runuser", "-u", user, "--", *argv]
        with (self.dir / "stderr.log").open("w") as stderr:  # a pipe nobody reads would fill
            self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (self.dir / f".s.PGSQL.{PORT}").exists():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise ServerError(f"pgbouncer did not start: {self.log_tail()}")
            time.sleep(0.05)

    def log_tail(self) -> str:
        text = ""
        for name in ("pgbouncer.log", "stderr.log"):
            log = self.dir / name
            text += log.read_text(errors="replace") if log.exists() else ""
        return "\n".join(text.splitlines()[-20:])

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Bouncer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
