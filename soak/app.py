"""The soak's worker process: a Taskboard app with the soak's tasks, recording its history.

    python -m soak.app --url URL --history FILE --name NAME [--lease S --renew-every S --pool-size N]

What the history gets, each line fsynced before the worker goes on:

- from the handlers (what a handler sees): `start` (job, token, attempt,
  idempotency key) and `effect` (job, token: the "sent e-mail", written
  right before the handler returns success), `skip` when still_holder()
  said no right before an effect;
- from wrappers around the driver's SQL calls (`taskboard.sql.claim`,
  `renew_many`, `complete`, `complete_many`, `complete_many_then_claim`, `fail`, `release`,
  `lease_state`), installed in this process only: every answer the database
  gave the worker, with the wall time the call was sent. The driver is not
  changed: its worker looks these functions up on the module at each call;
- from the driver's own log records (logger taskboard.worker): `lost`
  (the worker gave a job up), `refused_log` (it logged a refused
  complete/fail), and `counters` (its final counts, at a graceful exit).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from soak.history import History
from taskboard import sql as tsql
from taskboard.app import Taskboard
from taskboard.context import AsyncContext, BaseContext, SyncContext
from taskboard.settings import load_settings

POLL_INTERVAL_S = 0.5
SHUTDOWN_GRACE_S = 5.0
STATS_INTERVAL_S = 30.0
LONG_STEP_S = 0.1


class NotHolder(Exception):
    """still_holder() said no right before the external effect: do not send it."""


class PlannedFailure(Exception):
    """A handler failing on purpose."""


def build_app(app: Taskboard, history: History) -> Taskboard:
    """Register the soak's tasks on `app`; each records its start and its effect."""

    def started(ctx: BaseContext) -> None:
        history.write(
            "start",
            job=ctx.job_id,
            token=str(ctx.token),
            attempt=ctx.attempt,
            task=ctx.task,
            ikey=str(ctx.idempotency_key),
        )

    def effect(ctx: BaseContext) -> None:
        history.write("effect", job=ctx.job_id, token=str(ctx.token), ikey=str(ctx.idempotency_key))

    @app.task("email.send", queue="email")
    async def email_send(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        if not await ctx.still_holder():
            history.write("skip", job=ctx.job_id, token=str(ctx.token))
            raise NotHolder("no longer the holder right before sending")
        effect(ctx)
        return {"sent": payload["rid"]}

    @app.task("report.render", queue="email")
    def report_render(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        time.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"rendered": payload["rid"]}

    @app.task("ledger.post", queue="ledger", transactional=True)
    async def ledger_post(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        assert ctx.conn is not None
        if "hold" in payload:
            # Block on the handler's pool connection past the lease: the
            # worker's own renewal connection must keep the lease alive.
            await ctx.conn.execute("SELECT pg_sleep(%s)", [payload["hold"]])
        else:
            await asyncio.sleep(payload["ms"] / 1000)
        await ctx.conn.execute(
            "INSERT INTO soak_app.ledger (job_id, token, rid) VALUES (%s, %s, %s)",
            [ctx.job_id, ctx.token, payload["rid"]],
        )
        effect(ctx)
        return {"posted": payload["rid"]}

    @app.task("batch.long", queue="ledger")
    async def batch_long(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        deadline = time.monotonic() + payload["run"]
        while time.monotonic() < deadline:
            await asyncio.sleep(LONG_STEP_S)
        effect(ctx)
        return {"ran": payload["run"]}

    @app.task("flaky", queue="email")
    async def flaky(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        if ctx.attempt == 1:
            raise PlannedFailure("flaky: the first attempt fails on purpose")
        effect(ctx)
        return {"attempt": ctx.attempt}

    @app.task("doomed", queue="ledger")
    def doomed(ctx: SyncContext, payload: dict[str, Any]) -> None:
        started(ctx)
        time.sleep(payload["ms"] / 1000)
        raise PlannedFailure("doomed: every attempt fails on purpose")

    @app.task("dedupe.sync", queue="email")
    async def dedupe_sync(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"synced": payload["rid"]}

    return app


# -- recording the database's answers ------------------------------------------------


def _recorded(
    history: History,
    name: str,
    describe: Callable[[tuple[Any, ...], Any], list[dict[str, Any]]],
    identify: Callable[[tuple[Any, ...]], dict[str, Any]],
    *,
    before: bool = False,
    label: str | None = None,
) -> None:
    """Replace taskboard.sql.`name` by a wrapper that records every answer, and
    every call that raised instead (with what it was about: its outcome is unknown).
    With `before`, the call is also recorded before it is sent (`NAME_sent`), so
    that a kill between the database's commit and the answer's record still
    leaves a trace of what was asked. `label` names those events instead of
    `name`."""
    original: Callable[..., Awaitable[Any]] = getattr(tsql, name)
    label = label or name

    @functools.wraps(original)
    async def wrapper(*args: Any) -> Any:
        sent = time.time()
        if before:
            history.write(f"{label}_sent", sent=sent, **identify(args))
        try:
            answer = await original(*args)
        except BaseException as exc:
            history.write(
                f"{label}_error",
                sent=sent,
                error=f"{type(exc).__name__}: {exc}"[:200],
                **identify(args),
            )
            raise
        events = describe(args, answer)
        if events:
            history.write_many([{"sent": sent, **e} for e in events])
        return answer

    setattr(tsql, name, wrapper)


def install_recorders(history: History) -> None:
    """Record every claim, renew, complete, fail, release and lease_state answer."""

    def claim(args: tuple[Any, ...], rows: list[tsql.Claimed]) -> list[dict[str, Any]]:
        return [
            {
                "ev": "claim",
                "job": r.job_id,
                "token": str(r.token),
                "attempt": r.attempt,
                "task": r.task,
                "rid": r.payload.get("rid") if isinstance(r.payload, dict) else None,
                "exp": r.lease_expires_at.timestamp(),
                "ikey": str(r.idempotency_key),
            }
            for r in rows
        ]

    def renew_many(args: tuple[Any, ...], answers: dict[int, Any]) -> list[dict[str, Any]]:
        _, job_ids, tokens, _ = args
        items = [
            [job, str(token), None if answers.get(job) is None else answers[job].timestamp()]
            for job, token in zip(job_ids, tokens, strict=True)
        ]
        return [{"ev": "renew", "items": items}]

    def complete(args: tuple[Any, ...], answer: bool) -> list[dict[str, Any]]:
        _, job, token, _ = args
        return [{"ev": "complete", "job": job, "token": str(token), "answer": answer, "txn": True}]

    def complete_many(
        args: tuple[Any, ...], answers: list[tuple[int, bool]]
    ) -> list[dict[str, Any]]:
        _, job_ids, tokens, _ = args
        return [
            {"ev": "complete", "job": job, "token": str(token), "answer": ok, "txn": False}
            for job, token, (_, ok) in zip(job_ids, tokens, answers, strict=True)
        ]

    def complete_many_then_claim(
        args: tuple[Any, ...], answer: tuple[list[tuple[int, bool]], list[tsql.Claimed]]
    ) -> list[dict[str, Any]]:
        # The claim committed with the completions: both answers, as if sent apart.
        return complete_many(args[:4], answer[0]) + claim(args, answer[1])

    def fail(args: tuple[Any, ...], state: str | None) -> list[dict[str, Any]]:
        job, token = args[1], args[2]
        return [{"ev": "fail", "job": job, "token": str(token), "answer": state}]

    def release(args: tuple[Any, ...], answer: bool) -> list[dict[str, Any]]:
        _, job, token = args
        return [{"ev": "release", "job": job, "token": str(token), "answer": answer}]

    def lease_state(args: tuple[Any, ...], state: str) -> list[dict[str, Any]]:
        _, job, token = args
        return [{"ev": "lease_state", "job": job, "token": str(token), "answer": state}]

    def one(args: tuple[Any, ...]) -> dict[str, Any]:
        return {"items": [[args[1], str(args[2])]]}

    def many(args: tuple[Any, ...]) -> dict[str, Any]:
        return {"items": [[job, str(token)] for job, token in zip(args[1], args[2], strict=True)]}

    def nothing(args: tuple[Any, ...]) -> dict[str, Any]:
        return {}

    recorders: list[tuple[str, Any, Callable[[tuple[Any, ...]], dict[str, Any]], str]] = [
        ("claim", claim, nothing, "claim"),
        ("renew_many", renew_many, many, "renew_many"),
        ("complete", complete, one, "complete"),
        ("complete_many", complete_many, many, "complete_many"),
        # The completions of a batch sent with the next claim, in one transaction.
        ("complete_many_then_claim", complete_many_then_claim, many, "complete_many"),
        ("fail", fail, one, "fail"),
        ("release", release, one, "release"),
        ("lease_state", lease_state, one, "lease_state"),
    ]
    settling = {"complete", "complete_many", "fail", "release"}
    for name, describe, identify, label in recorders:
        _recorded(history, name, describe, identify, before=label in settling, label=label)


class LogRecorder(logging.Handler):
    """Turn the worker's own warnings into history events (from the record's args)."""

    def __init__(self, history: History) -> None:
        super().__init__(level=logging.INFO)
        self.history = history

    def emit(self, record: logging.LogRecord) -> None:
        msg, args = str(record.msg), record.args
        if not isinstance(args, tuple):
            return
        try:
            if msg.startswith("lost job "):
                self.history.write("lost", job=args[0], attempt=args[1], why=str(args[2]))
            elif " of job %s (attempt %s) refused" in msg:
                self.history.write("refused_log", call=args[0], job=args[1], attempt=args[2])
            elif msg.startswith("worker %s stopped: "):
                counts = dict(part.split("=", 1) for part in str(args[1]).split())
                self.history.write("counters", **{k: int(v) for k, v in counts.items()})
            elif msg.startswith("job %s: the worker failed to settle it"):
                self.history.write("settle_error", job=args[0], error=str(record.exc_info)[:300])
        except Exception:  # noqa: BLE001 - a recorder must never break the worker
            self.handleError(record)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m soak.app")
    parser.add_argument("--url", required=True)
    parser.add_argument("--history", required=True, type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--renew-every", type=float, default=0.5)
    parser.add_argument("--pool-size", type=int, default=8)
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    history = History(args.history, process=args.name)
    logging.getLogger("taskboard").addHandler(LogRecorder(history))
    install_recorders(history)
    settings = load_settings(
        database_url=args.url,
        pool_size=args.pool_size,
        lease=args.lease,
        renew_every=args.renew_every,
        worker_name=args.name,
        poll_interval=POLL_INTERVAL_S,
        shutdown_grace=SHUTDOWN_GRACE_S,
        stats_interval=STATS_INTERVAL_S,
    )
    app = build_app(Taskboard(settings), history)
    history.write("worker_start", pid=os.getpid())
    try:
        app.run_worker()
    except Exception as exc:
        history.write("worker_error", error=f"{type(exc).__name__}: {exc!r}"[:500])
        raise
    history.write("worker_exit", pid=os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
