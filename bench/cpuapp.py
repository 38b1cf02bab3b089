"""W7's app, run by `taskboard worker cpuapp:app --processes N` from bench/ (run.py starts it).

Task `w7-burn`, sync: burns payload["ms"] milliseconds of this thread's CPU
in a pure-Python loop (a CPU-bound handler, holding the GIL), then returns.
With BENCH_W7_STAMPS set to a directory, each process writes the wall-clock
time (time.time()) its first handler started to a file named by its pid.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from taskboard import Taskboard
from taskboard.context import SyncContext

TASK = "w7-burn"

app = Taskboard()
_first = threading.Lock()
_stamped = False


def stamp_first_start() -> None:
    global _stamped
    with _first:
        if _stamped:
            return
        _stamped = True
    stamps = os.environ.get("BENCH_W7_STAMPS")
    if stamps:
        (Path(stamps) / str(os.getpid())).write_text(repr(time.time()))


@app.task(TASK)
def burn(ctx: SyncContext, payload: dict[str, Any]) -> None:
    stamp_first_start()
    end = time.thread_time() + float(payload["ms"]) / 1000
    spins = 0
    while time.thread_time() < end:
        spins += 1
