"""The bench's PostgreSQL 18: a throwaway `taskboard_dev.server.Server`, and what it reports.

One run gets a fresh cluster under /tmp (the same disk as the project here,
not a tmpfs, so fsync means fsync), Unix socket only, removed at the end.
Durability is spelled out on the command line by taskboard_dev.server even
though it is the default (fsync, synchronous_commit and full_page_writes
on); everything else stays at PostgreSQL's defaults, pg_stat_statements
preloaded only when asked for. `reported_settings()` reads back what the
results print.
"""

from __future__ import annotations

import psycopg

from taskboard_dev.server import Server

VERSION = "18"
PREFIX = "taskboard-bench-"
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


def bench_server(*, stat_statements: bool = False) -> Server:
    """The run's server, not started yet: `start()` it, `remove()` it at the end."""
    settings = {"shared_preload_libraries": "pg_stat_statements"} if stat_statements else {}
    return Server(version=VERSION, settings=settings, prefix=PREFIX)


def reported_settings(server: Server) -> dict[str, str]:
    """The settings the results print, as the running server has them."""
    with psycopg.connect(server.url(), autocommit=True) as conn:
        return {name: str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in REPORTED}
