"""A small app for `taskboard worker apps.cli_app:app`, run from tests/ by test_cli.py."""

from __future__ import annotations

import os
import time
from typing import Any

from taskboard.app import Taskboard
from taskboard.context import BaseContext

QUEUE = "cli"

app = Taskboard()
not_an_app = "a string"


@app.task("cli-echo", queue=QUEUE)
def echo(ctx: BaseContext, payload: Any) -> dict[str, Any]:
    """Return the payload, so the job's result shows it went through the handler."""
    return {"echo": payload, "attempt": ctx.attempt}


@app.task("cli-boom", queue=QUEUE, max_attempts=1)
def boom(ctx: BaseContext, payload: Any) -> None:
    """Fail, so the worker logs a record about the job, with its traceback."""
    raise RuntimeError("boom for the log")


@app.task("cli-pid", queue=QUEUE)
def pid(ctx: BaseContext, payload: Any) -> dict[str, Any]:
    """Sleep payload["sleep"] seconds in a sync handler; return which process ran it."""
    time.sleep(float(payload.get("sleep", 0)))
    return {"pid": os.getpid()}
