"""Worker processes and the journal their handlers write: one harness for the demo, the tests
and the soak.

A `Journal` is an append-only JSON-lines file. Each write appends whole
lines in one O_APPEND write and fsyncs before the writer goes on, so a
record survives a kill -9 right after it, and processes writing the same
file never interleave their lines. A torn last line (a kill during the
write) is skipped when reading.

A `WorkerProcess` is one child process with its output in a log file: it
is signalled (SIGSTOP freezes it, SIGTERM asks for a graceful stop), waited
for, and read back — the "worker NAME stopped: k=v ..." line a Taskboard
worker logs when it stops gives its counters.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

WAIT_SECONDS = 90.0  # how long a condition may take to appear on a loaded machine
EXIT_SECONDS = 60.0  # how long a signalled worker may take to exit
POLL_SECONDS = 0.05
LOG_TAIL_LINES = 15
COUNTERS_LINE = re.compile(r"worker (\S+) stopped: (.*)$", re.MULTILINE)


# -- the journal -------------------------------------------------------------------


class Journal:
    """An append-only, fsynced JSON-lines file; thread-safe (sync handlers write from threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None

    def write(self, record: Mapping[str, Any]) -> None:
        self.write_many([record])

    def write_many(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append `records`, one line each, in one write, and fsync once."""
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()
        if not data:
            return
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def records(self, **match: Any) -> list[dict[str, Any]]:
        """Every record written so far whose fields equal `match`, in file order."""
        return [r for r in read_records(self.path) if all(r.get(k) == v for k, v in match.items())]

    def first(self, **match: Any) -> dict[str, Any] | None:
        """The first record whose fields equal `match`, or None."""
        return next(iter(self.records(**match)), None)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of the journal at `path` (none when it does not exist yet)."""
    try:
        file = open(path, encoding="utf-8")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        return
    with file:
        for line in file:
            if not line.endswith("\n"):
                break  # torn by a kill during the write
            if line.strip():
                yield json.loads(line)


# -- worker processes --------------------------------------------------------------


class WorkerProcessError(Exception):
    """A worker process did not do what was awaited; the message quotes its log."""


@dataclass(eq=False, kw_only=True)  # a process is itself, whatever its fields
class WorkerProcess:
    """One child process, its log, and (when its handlers write one) its journal."""

    name: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    journal: Journal | None = None
    stopped: bool = False  # SIGSTOPped

    @classmethod
    def start(
        cls,
        name: str,
        argv: Sequence[str],
        *,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        journal: Journal | None = None,
        new_session: bool = False,
        **fields: Any,
    ) -> Self:
        """Run `argv` with stdout and stderr into `log_path` (truncated), stdin closed;
        `fields` are those of a subclass."""
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=None if env is None else dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=new_session,
            )
        return cls(name=name, proc=proc, log_path=log_path, journal=journal, **fields)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        tail = self.log().splitlines()[-lines:]
        return "\n".join(f"    {self.name} | {line}" for line in tail)

    def check_alive(self) -> None:
        """WorkerProcessError when the process has exited."""
        if self.proc.poll() is not None:
            raise WorkerProcessError(
                f"{self.name} exited unexpectedly (status {self.proc.returncode}):\n"
                f"{self.log_tail()}"
            )

    def wait_for_log(self, text: str, timeout: float = WAIT_SECONDS) -> None:
        """Return once `text` is in the log; WorkerProcessError when the process exits first
        or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while text not in self.log():
            if self.proc.poll() is not None:
                raise WorkerProcessError(
                    f"worker {self.name} exited ({self.proc.returncode}) before logging {text!r}:\n"
                    + self.log()
                )
            if time.monotonic() > deadline:
                raise WorkerProcessError(
                    f"timed out after {timeout:g}s waiting for worker {self.name} to log {text!r}"
                )
            time.sleep(POLL_SECONDS)

    def send(self, signum: int) -> None:
        os.kill(self.pid, signum)
        if signum == signal.SIGSTOP:
            self.stopped = True
        elif signum == signal.SIGCONT:
            self.stopped = False

    def freeze(self, timeout: float = EXIT_SECONDS) -> None:
        """SIGSTOP, and wait until the kernel reports the whole process stopped."""
        self.send(signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WUNTRACED | os.WNOHANG)
            if pid == self.pid:
                if os.WIFSTOPPED(status):
                    return
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.check_alive()
            time.sleep(POLL_SECONDS / 5)
        raise WorkerProcessError(f"{self.name} did not stop within {timeout:g}s of SIGSTOP")

    def thaw(self) -> None:
        self.send(signal.SIGCONT)

    def wait_exit(self, timeout: float = EXIT_SECONDS) -> int:
        """The exit status; WorkerProcessError when the process is still running after
        `timeout`."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise WorkerProcessError(
                f"worker {self.name} did not exit within {timeout:g}s:\n{self.log()}"
            ) from None

    def terminate(self, timeout: float = EXIT_SECONDS) -> dict[str, int]:
        """SIGTERM, wait for a clean exit, and return the counters it logged."""
        if self.proc.poll() is None:
            self.send(signal.SIGTERM)
        status = self.wait_exit(timeout)
        if status != 0:
            raise WorkerProcessError(f"worker {self.name} exited with {status}:\n{self.log()}")
        return self.counters()

    def counters(self) -> dict[str, int]:
        """The counters of the "worker NAME stopped: k=v ..." line."""
        match = COUNTERS_LINE.search(self.log())
        if match is None:
            raise WorkerProcessError(f"worker {self.name} logged no counters:\n{self.log()}")
        return {k: int(v) for k, v in (pair.split("=") for pair in match.group(2).split())}

    def kill(self, timeout: float | None = None) -> None:
        """Make sure the process is gone, frozen or not (teardown)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
                os.kill(self.pid, signal.SIGCONT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
