"""W5's app, run by `taskboard worker noopapp:app --processes N` from bench/ (w5_fanout.py
starts it): the bench's no-op task. With BENCH_STAMPS set to a directory, each process
writes the wall-clock time (time.time()) its first handler started to a file named by
its pid."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from taskboard import Taskboard

TASK = "noop"  # systems.TASK: the task every W1 and W5 job names

app = Taskboard()
_stamped = False


@app.task(TASK)
async def noop(ctx: Any, payload: dict[str, Any]) -> None:
    global _stamped
    if not _stamped:
        _stamped = True
        stamps = os.environ.get("BENCH_STAMPS")
        if stamps:
            (Path(stamps) / str(os.getpid())).write_text(repr(time.time()))
