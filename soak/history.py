"""The history outside the queue: one journal (taskboard_dev.harness) per process.

Every event is appended and fsynced before the writer goes on, so what a
process recorded survives a kill -9 right after it. A torn last line (a
kill during the write) is skipped when reading.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from taskboard_dev.harness import Journal, read_records


class History:
    """The history file of one process: events with the wall time and the process's name."""

    def __init__(self, path: Path, *, process: str) -> None:
        self.process = process
        self._journal = Journal(path)

    def write(self, event: str, **fields: Any) -> None:
        self.write_many([{"ev": event, **fields}])

    def write_many(self, events: Iterable[dict[str, Any]]) -> None:
        """Append `events` (each gets the wall time and process) and fsync once."""
        now = time.time()
        self._journal.write_many({"t": now, "proc": self.process, **event} for event in events)

    def close(self) -> None:
        self._journal.close()


def read_events(directory: Path) -> Iterator[dict[str, Any]]:
    """Every event in every *.jsonl file of `directory`, file by file."""
    for path in sorted(directory.glob("*.jsonl")):
        yield from read_records(path)
