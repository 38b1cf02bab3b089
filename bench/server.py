"""The bench's PostgreSQL 18: a throwaway `taskboard_dev.server.Server`, and what it reports.

One run gets a fresh cluster under /tmp (the same disk as the project here,
not a tmpfs, so fsync means fsync), Unix socket only (and 127.0.0.1 when W12
runs), removed at the end.
Durability is spelled out on the command line by taskboard_dev.server even
though it is the default (fsync, synchronous_commit and full_page_writes
on); everything else stays at PostgreSQL's defaults, pg_stat_statements
preloaded only when asked for. `reported_settings()` reads back what the
results print.

`ServerCpu` measures the whole server's CPU time over a window (bench/README.md,
"Server CPU per job"): the postmaster's own user and system time, what the
children it reaped used (cutime + cstime, where a backend's time goes once it
exits), and the user and system time of every live child (backends, autovacuum,
checkpointer, WAL writer, ...), read from /proc. A difference of two readings
stays right when backends exit between them: the exited child's time moves from
the live sum into the postmaster's cutime/cstime.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import psycopg

from taskboard_dev.server import PORT, Server, ServerError, postmaster

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


def bench_server(*, stat_statements: bool = False, tcp: bool = False) -> Server:
    """The run's server, not started yet: `start()` it, `remove()` it at the end. With
    `tcp` it also listens on 127.0.0.1 at the socket's port (W12 connects there, as an
    application does); ServerError when that port is taken."""
    settings = {"shared_preload_libraries": "pg_stat_statements"} if stat_statements else {}
    if tcp:
        with socket.socket() as probe:
            # As PostgreSQL binds: a connection of a run before in TIME-WAIT is no owner.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", PORT))
            except OSError as exc:
                raise ServerError(
                    f"W12 needs 127.0.0.1:{PORT} for the bench's server, and it is taken: {exc}"
                ) from exc
        settings["listen_addresses"] = "127.0.0.1"
    return Server(version=VERSION, settings=settings, prefix=PREFIX)


def reported_settings(server: Server) -> dict[str, str]:
    """The settings the results print, as the running server has them."""
    with psycopg.connect(server.url(), autocommit=True) as conn:
        return {name: str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in REPORTED}


CLK_TCK = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat counts CPU time in these
CPU_SAMPLE_S = 0.02  # how often ServerCpu reads /proc while a measurement runs
# Fields of /proc/<pid>/stat after the ")" that closes the command name (0-based there):
# 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime (man 5 proc numbers them 4, 14-17).
_PPID, _UTIME, _STIME, _CUTIME, _CSTIME = 1, 11, 12, 13, 14


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    return text.rsplit(b")", 1)[1].decode().split()


class ServerCpu:
    """The CPU time of one PostgreSQL server, the postmaster and all its children, in ticks.

    `ticks()` reads it now; `sampling()` reads it every CPU_SAMPLE_S in the background
    while a measurement runs, and `between(t0, t1)` gives the CPU seconds between two
    wall-clock instants (time.time(), as the workers stamp them), interpolated linearly
    between the samples on either side of each.
    """

    def __init__(self, server: Server) -> None:
        found = postmaster(server.datadir)
        if found is None:
            raise RuntimeError(f"no postmaster running in {server.datadir}")
        self.pid = found[0]
        self._children: dict[int, bool] = {}  # pid -> whether the postmaster is its parent
        self.samples: list[tuple[float, int]] = []  # (time.time(), ticks)

    def _live_children(self) -> list[int]:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        known = self._children
        for pid in set(known) - set(pids):
            del known[pid]
        for pid in pids:
            if pid not in known:
                fields = _stat(pid)
                known[pid] = fields is not None and int(fields[_PPID]) == self.pid
        return [pid for pid, child in known.items() if child]

    def ticks(self) -> int:
        """The server's CPU time so far (user + system, clock ticks)."""
        for _ in range(10):
            before = _stat(self.pid)
            if before is None:
                raise RuntimeError(f"the postmaster (pid {self.pid}) is gone")
            live = 0
            for pid in self._live_children():
                fields = _stat(pid)
                if fields is not None:
                    live += int(fields[_UTIME]) + int(fields[_STIME])
            after = _stat(self.pid)
            if after is None:
                raise RuntimeError(f"the postmaster (pid {self.pid}) is gone")
            reaped = int(after[_CUTIME]) + int(after[_CSTIME])
            if reaped == int(before[_CUTIME]) + int(before[_CSTIME]):
                # No child was reaped while the live ones were read: none counted twice or missed.
                return int(after[_UTIME]) + int(after[_STIME]) + reaped + live
        raise RuntimeError("the postmaster kept reaping children: no steady reading")

    def sample(self) -> None:
        self.samples.append((time.time(), self.ticks()))

    @contextlib.asynccontextmanager
    async def sampling(self) -> AsyncIterator[ServerCpu]:
        """Sample every CPU_SAMPLE_S while the body runs (and once at each end)."""

        async def loop() -> None:
            while True:
                await asyncio.sleep(CPU_SAMPLE_S)
                self.sample()

        self.sample()
        task = asyncio.create_task(loop())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.sample()

    def at(self, when: float) -> float:
        """The ticks at wall-clock `when`, interpolated between the samples around it
        (the first or last sample when it falls outside them)."""
        samples = self.samples
        if not samples:
            raise RuntimeError("no sample taken")
        if when <= samples[0][0]:
            return float(samples[0][1])
        for (t0, v0), (t1, v1) in itertools.pairwise(samples):
            if t0 <= when <= t1:
                return v0 + (v1 - v0) * ((when - t0) / (t1 - t0) if t1 > t0 else 1.0)
        return float(samples[-1][1])

    def between(self, start: float, end: float, jobs: int) -> dict[str, Any]:
        """The server's CPU from `start` to `end` (wall clock), per job too, with the raw
        figures the JSON keeps."""
        first, last = self.at(start), self.at(end)
        seconds = (last - first) / CLK_TCK
        whole = (self.samples[-1][1] - self.samples[0][1]) / CLK_TCK
        return {
            "clk_tck": CLK_TCK,
            "sample_every_s": CPU_SAMPLE_S,
            "samples": len(self.samples),
            "window": [start, end],
            "ticks_at_start": round(first, 2),
            "ticks_at_end": round(last, 2),
            "cpu_s": seconds,
            "us_per_job": seconds / jobs * 1e6,
            # The worker's whole life (start-up and shut-down too), for comparison.
            "sampled_s": self.samples[-1][0] - self.samples[0][0],
            "sampled_cpu_s": whole,
        }
