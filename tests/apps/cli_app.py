"""A small app for `taskboard worker apps.cli_app:app`, run from tests/ by tests/process/."""

from __future__ import annotations

import os
import time
from typing import Any

import pydantic

from taskboard.app import Taskboard
from taskboard.context import AsyncContext, BaseContext

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


class SignUp(pydantic.BaseModel):
    """The payload of cli-sign-up: `taskboard enqueue --app` validates it."""

    email: str
    seats: int = pydantic.Field(default=1, ge=1)


@app.task("cli-sign-up", queue=QUEUE)
def sign_up(ctx: BaseContext, payload: SignUp) -> dict[str, Any]:
    """Return what the handler was given."""
    return {"type": type(payload).__name__, "seats": payload.seats}


@app.task("cli-tx", queue=QUEUE, transactional=True)
async def tx(ctx: AsyncContext, payload: Any) -> dict[str, Any]:
    """Write a row in the job's transaction (table cli_tx_log, made by the test), and say
    which process ran it and whether it still holds the job."""
    assert ctx.conn is not None
    await ctx.conn.execute(
        "INSERT INTO cli_tx_log (job_id, pid) VALUES (%s, %s)", [ctx.job_id, os.getpid()]
    )
    return {"pid": os.getpid(), "holder": await ctx.still_holder()}
