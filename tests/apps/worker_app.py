"""A worker application for the process-level tests: run it as a subprocess.

    TASKBOARD_DATABASE_URL=... WORKER_APP_JOURNAL=/tmp/journal python tests/apps/worker_app.py

Settings come from the TASKBOARD_* variables (lease, renew_every, pool_size,
shutdown_grace, poll_interval, worker_name, listen_url, ...). The app's own:

- WORKER_APP_JOURNAL (required): a file every handler appends one JSON line
  to per event, fsynced: "start" when it begins, "effect" for its external
  effect (the email it "sends"), "skipped" when the holder check said no,
  "cancelled" when it was cancelled, "lost" when a sync handler saw
  ctx.lost. Each line carries job, attempt, token, worker and pid.
- WORKER_APP_GATE (optional): a path; handlers of this process wait until
  that file exists before their effect. A payload's "gate" overrides it.

Tasks, all on queue "default":

- work (async) and work_sync (sync): record start; wait for the gate and
  then sleep payload["sleep"] seconds (if given); with payload
  ["check_holder"], ask ctx.still_holder() right before the effect and skip
  it when the answer is no; record the effect; return the token and attempt.
- ledger (async, transactional): like work, but first inserts a row
  (job_id, token, worker) into public.ledger on ctx.conn, so it commits only
  with the job's completion. With payload["watch"] it asks still_holder
  while it waits and records "not_holder" if the answer is ever no.
- slow (async) and slow_sync (sync), timeout 1 s: sleep payload["sleep"]
  seconds (600 by default).
- boom (async): raises ValueError(payload["message"]).
- stubborn (async): records start, then waits for the gate and swallows
  every cancellation while it does (a handler that will not be stopped).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from taskboard import Taskboard
from taskboard.context import AsyncContext, BaseContext, SyncContext
from taskboard_dev.harness import Journal

GATE_POLL_SECONDS = 0.05
SLOW_TIMEOUT_SECONDS = 1.0
SLOW_DEFAULT_SLEEP_SECONDS = 600.0

app = Taskboard()


def worker_name() -> str:
    return os.environ.get("TASKBOARD_WORKER_NAME", f"pid-{os.getpid()}")


JOURNAL = Journal(Path(os.environ["WORKER_APP_JOURNAL"]))


def record(event: str, ctx: BaseContext, **extra: Any) -> None:
    """Append one event line to the journal, fsynced: it survives a kill -9 right after."""
    JOURNAL.write(
        {
            "event": event,
            "job": ctx.job_id,
            "attempt": ctx.attempt,
            "token": str(ctx.token),
            "worker": worker_name(),
            "pid": os.getpid(),
            **extra,
        }
    )


def gate_of(payload: dict[str, Any]) -> Path | None:
    gate = payload.get("gate") or os.environ.get("WORKER_APP_GATE")
    return Path(gate) if gate else None


def result_of(ctx: BaseContext) -> dict[str, Any]:
    return {"token": str(ctx.token), "attempt": ctx.attempt, "worker": worker_name()}


async def wait_gate(ctx: AsyncContext, payload: dict[str, Any]) -> None:
    gate = gate_of(payload)
    watch = bool(payload.get("watch"))
    warned = False
    while gate is not None and not gate.exists():
        if watch and not warned and not await ctx.still_holder():
            record("not_holder", ctx)
            warned = True
        await asyncio.sleep(GATE_POLL_SECONDS)
    if payload.get("sleep"):
        await asyncio.sleep(float(payload["sleep"]))


@app.task("work")
async def work(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any] | None:
    record("start", ctx)
    try:
        await wait_gate(ctx, payload)
        if payload.get("check_holder") and not await ctx.still_holder():
            record("skipped", ctx)
            return {"skipped": True}
        record("effect", ctx)
        return result_of(ctx)
    except asyncio.CancelledError:
        record("cancelled", ctx, lost=ctx.lost)
        raise


@app.task("work_sync")
def work_sync(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any] | None:
    record("start", ctx)
    gate = gate_of(payload)
    while gate is not None and not gate.exists():
        if ctx.lost:
            record("lost", ctx)
            return None
        time.sleep(GATE_POLL_SECONDS)
    if payload.get("sleep"):
        time.sleep(float(payload["sleep"]))
    if payload.get("check_holder") and not ctx.still_holder():
        record("skipped", ctx)
        return {"skipped": True}
    record("effect", ctx)
    return result_of(ctx)


@app.task("ledger", transactional=True)
async def ledger(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
    assert ctx.conn is not None
    record("start", ctx)
    try:
        await ctx.conn.execute(
            "INSERT INTO public.ledger (job_id, token, note) VALUES (%s, %s, %s)",
            [ctx.job_id, ctx.token, worker_name()],
        )
        await wait_gate(ctx, payload)
        record("effect", ctx)
        return result_of(ctx)
    except asyncio.CancelledError:
        record("cancelled", ctx, lost=ctx.lost)
        raise


@app.task("slow", timeout=SLOW_TIMEOUT_SECONDS)
async def slow(ctx: AsyncContext, payload: dict[str, Any]) -> None:
    record("start", ctx)
    try:
        await asyncio.sleep(float(payload.get("sleep", SLOW_DEFAULT_SLEEP_SECONDS)))
    except asyncio.CancelledError:
        record("cancelled", ctx, lost=ctx.lost)
        raise
    record("end", ctx)


@app.task("slow_sync", timeout=SLOW_TIMEOUT_SECONDS)
def slow_sync(ctx: SyncContext, payload: dict[str, Any]) -> None:
    record("start", ctx)
    time.sleep(float(payload.get("sleep", SLOW_DEFAULT_SLEEP_SECONDS)))
    record("end", ctx)


@app.task("boom")
async def boom(ctx: AsyncContext, payload: dict[str, Any]) -> None:
    record("start", ctx)
    raise ValueError(payload.get("message", "boom"))


@app.task("stubborn")
async def stubborn(ctx: AsyncContext, payload: dict[str, Any]) -> None:
    record("start", ctx)
    gate = gate_of(payload)
    while gate is None or not gate.exists():
        try:
            await asyncio.sleep(GATE_POLL_SECONDS)
        except asyncio.CancelledError:
            record("cancelled", ctx, lost=ctx.lost)  # and carries on regardless


def main() -> None:
    if "WORKER_APP_JOURNAL" not in os.environ:
        sys.exit("worker_app: WORKER_APP_JOURNAL is required")
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    app.run_worker()


if __name__ == "__main__":
    main()
