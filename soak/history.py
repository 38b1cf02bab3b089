"""The history outside the queue: one append-only JSON-lines file per process.

Every event is written with append + flush + os.fsync before the writer
goes on, so what a process recorded survives a kill -9 right after it.
A torn last line (a kill during the write) is skipped when reading.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


class History:
    """An fsynced JSON-lines appender; thread-safe (sync handlers write from threads)."""

    def __init__(self, path: Path, *, process: str) -> None:
        self.path = path
        self.process = process
        self._lock = threading.Lock()
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the process

    def write(self, event: str, **fields: Any) -> None:
        self.write_many([{"ev": event, **fields}])

    def write_many(self, events: Iterable[dict[str, Any]]) -> None:
        """Append `events` (each gets the wall time and process) and fsync once."""
        now = time.time()
        lines = "".join(
            json.dumps({"t": now, "proc": self.process, **event}, separators=(",", ":")) + "\n"
            for event in events
        )
        if not lines:
            return
        with self._lock:
            self._file.write(lines)
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_events(directory: Path) -> Iterator[dict[str, Any]]:
    """Every event in every *.jsonl file of `directory`, file by file."""
    for path in sorted(directory.glob("*.jsonl")):
        with open(path, encoding="utf-8") as file:
            for line in file:
                if not line.endswith("\n"):
                    break  # torn by a kill during the write
                yield json.loads(line)
