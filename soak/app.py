"""The soak's worker process: a Taskboard app with the soak's tasks, recording its history.

    python -m soak.app --url URL --history FILE --name NAME [--lease S --renew-every S --pool-size N]
                       [--plain --concurrency N]

With --plain the app registers only the tasks of the queues without a
transactional task (soak.plan.PLAIN_QUEUES), so it claims only those queues
and its handlers hold no connection: `concurrency` may then go beyond its
handler connections.

What the history gets, each line fsynced before the worker goes on:

- from the handlers (what a handler sees): `start` (job, token, attempt,
  idempotency key) and `effect` (job, token: the "sent e-mail", written
  right before the handler returns success), `skip` when still_holder()
  said no right before an effect;
- from the worker's per-job event hook (`app.on_event`, taskboard.events):
  every answer the database gave the worker (claim, with its fence; renew,
  complete, fail, release, lease_state) with the wall time the call was sent, each settling
  call right before it is sent (`complete_sent`, ...) or when it raised
  (`complete_error`, ...), and `lost` when the worker gave a claim up;
- from the driver's own log records (logger taskboard.worker): `refused_log`
  (it logged a refused complete/fail), `counters` (its final counts, at a
  graceful exit), `worker_started` (its loop began), `control_down` and
  `control_up` (its control connection, which also runs the periodic
  schedule, failed and came back), and `periodic` (its scheduler enqueued a
  slot's job);
- from a count of the handlers running (handler bodies this worker still
  counts as its own: begun, not returned, not given up): `handlers_peak`
  each time that count reaches a new high.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from soak.history import History
from soak.plan import KEYED_QUEUE, PLAIN_QUEUES, RATED_QUEUE
from taskboard.app import Taskboard
from taskboard.context import AsyncContext, BaseContext, SyncContext
from taskboard.events import JobEvent
from taskboard.settings import load_settings

POLL_INTERVAL_S = 0.5
SHUTDOWN_GRACE_S = 5.0
STATS_INTERVAL_S = 30.0
LONG_STEP_S = 0.1


TRANSACTIONAL = "ledger.post"
# A periodic schedule every worker runs: a slot every PERIODIC_EVERY_S seconds
# (cron with seconds first), so that a quick run passes a dozen.
PERIODIC_EVERY_S = 2
PERIODIC_CRON = f"*/{PERIODIC_EVERY_S} * * * * *"
PERIODIC_SCHEDULE = "soak.tick"
PERIODIC_TASK = "periodic.tick"


class NotHolder(Exception):
    """still_holder() said no right before the external effect: do not send it."""


class PlannedFailure(Exception):
    """A handler failing on purpose."""


class Gauge:
    """The handlers running in this worker now, by token, and a history line
    (`handlers_peak`) each time their number reaches a new high.

    A handler counts from its first step until it returns or raises, or until
    the worker gives its claim up (the `lost` event: the worker's slot is then
    free, even while a sync handler's thread runs on to its end)."""

    def __init__(self, history: History) -> None:
        self.history = history
        self._lock = threading.Lock()  # sync handlers enter and leave from threads
        self._running: set[str] = set()
        self._peak = 0

    def enter(self, token: str) -> None:
        with self._lock:
            self._running.add(token)
            running = len(self._running)
            new_peak = running > self._peak
            if new_peak:
                self._peak = running
        if new_peak:
            self.history.write("handlers_peak", running=running)

    def leave(self, token: str) -> None:
        with self._lock:
            self._running.discard(token)

    def counted(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """`handler`, counted while it runs (async or sync alike)."""
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def async_counted(ctx: BaseContext, payload: Any) -> Any:
                self.enter(str(ctx.token))
                try:
                    return await handler(ctx, payload)
                finally:
                    self.leave(str(ctx.token))

            return async_counted

        @functools.wraps(handler)
        def sync_counted(ctx: BaseContext, payload: Any) -> Any:
            self.enter(str(ctx.token))
            try:
                return handler(ctx, payload)
            finally:
                self.leave(str(ctx.token))

        return sync_counted


def build_app(
    app: Taskboard,
    history: History,
    gauge: Gauge | None = None,
    queues: Iterable[str] | None = None,
) -> Taskboard:
    """Register the soak's tasks on `app`; each records its start and its effect. With
    `queues`, only the tasks of those queues; with `gauge`, each handler is counted."""
    serves = None if queues is None else set(queues)

    def task(name: str, **options: Any) -> Callable[[Any], Any]:
        def register(handler: Any) -> Any:
            if serves is not None and options["queue"] not in serves:
                return handler
            return app.task(name, **options)(gauge.counted(handler) if gauge else handler)

        return register

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

    @task("email.send", queue="email")
    async def email_send(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        if not await ctx.still_holder():
            history.write("skip", job=ctx.job_id, token=str(ctx.token))
            raise NotHolder("no longer the holder right before sending")
        effect(ctx)
        return {"sent": payload["rid"]}

    @task("report.render", queue="email")
    def report_render(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        time.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"rendered": payload["rid"]}

    @task(TRANSACTIONAL, queue="ledger", transactional=True)
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

    @task("batch.long", queue="ledger")
    async def batch_long(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        deadline = time.monotonic() + payload["run"]
        while time.monotonic() < deadline:
            await asyncio.sleep(LONG_STEP_S)
        effect(ctx)
        return {"ran": payload["run"]}

    @task("flaky", queue="email")
    async def flaky(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        if ctx.attempt == 1:
            raise PlannedFailure("flaky: the first attempt fails on purpose")
        effect(ctx)
        return {"attempt": ctx.attempt}

    @task("doomed", queue="ledger")
    def doomed(ctx: SyncContext, payload: dict[str, Any]) -> None:
        started(ctx)
        time.sleep(payload["ms"] / 1000)
        raise PlannedFailure("doomed: every attempt fails on purpose")

    @task("partner.call", queue="partner")
    async def partner_call(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"called": payload["rid"]}

    @task("customer.sync", queue=KEYED_QUEUE)
    async def customer_sync(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        # Most of these jobs carry a concurrency key: the queue's key limit decides
        # how many of one customer's syncs run at once.
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"synced": payload["rid"]}

    @task("meter.call", queue=RATED_QUEUE)
    async def meter_call(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        # A call to an API that meters its callers: the queue's rate limit decides how
        # many of these start per second, whichever worker claims them.
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"metered": payload["rid"]}

    @app.periodic(PERIODIC_CRON, name=PERIODIC_SCHEDULE, payload={"ms": 5})
    @task(PERIODIC_TASK, queue="email")
    async def periodic_tick(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"ticked": ctx.job_id}

    @task("dedupe.sync", queue="email")
    async def dedupe_sync(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        started(ctx)
        await asyncio.sleep(payload["ms"] / 1000)
        effect(ctx)
        return {"synced": payload["rid"]}

    return app


# -- recording the database's answers ------------------------------------------------


def _ts(at: Any) -> float | None:
    return None if at is None else float(at.timestamp())


def recorder(history: History, gauge: Gauge | None = None) -> Callable[[JobEvent], None]:
    """An event hook recording every answer the database gave this worker, and every
    settling call before it is sent (so a kill between the database's commit and the
    answer's record still leaves a trace of what was asked), or that raised instead."""

    def record(e: JobEvent) -> None:
        ident = {"job": e.job_id, "token": str(e.token)}
        items = {"items": [[e.job_id, str(e.token)]]}
        if e.kind == "claimed":
            r = e.claimed
            history.write(
                "claim",
                sent=_ts(e.sent_at),
                job=r.job_id,
                token=str(r.token),
                attempt=r.attempt,
                task=r.task,
                rid=r.payload.get("rid") if isinstance(r.payload, dict) else None,
                exp=r.lease_expires_at.timestamp(),
                ikey=str(r.idempotency_key),
                fence=r.fence,
            )
        elif e.kind == "renewed":
            history.write(
                "renew", sent=_ts(e.sent_at), items=[[e.job_id, str(e.token), _ts(e.answer)]]
            )
        elif e.kind == "holder_checked":
            history.write("lease_state", sent=_ts(e.at), answer=e.answer, **ident)
        elif e.kind == "sending":
            history.write(f"{e.outcome}_sent", sent=_ts(e.at), **items)
        elif e.kind == "send_failed":
            history.write(f"{e.outcome}_error", sent=_ts(e.at), error=str(e.error)[:200], **items)
        elif e.kind == "settled" and e.outcome == "complete":
            history.write(
                "complete",
                sent=_ts(e.sent_at),
                answer=e.answer,
                txn=e.task == TRANSACTIONAL,
                **ident,
            )
        elif e.kind == "settled":
            history.write("fail", sent=_ts(e.sent_at), answer=e.answer, **ident)
        elif e.kind == "released":
            history.write("release", sent=_ts(e.sent_at), answer=e.answer, **ident)
        elif e.kind == "lost":
            history.write("lost", job=e.job_id, attempt=e.attempt, why=str(e.error))
            if gauge is not None:
                gauge.leave(str(e.token))  # given up: its slot is free

    return record


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
            if " of job %s (attempt %s) refused" in msg:
                self.history.write("refused_log", call=args[0], job=args[1], attempt=args[2])
            elif msg.startswith("worker %s stopped: "):
                counts = dict(part.split("=", 1) for part in str(args[1]).split())
                self.history.write("counters", **{k: int(v) for k, v in counts.items()})
            elif msg.startswith("job %s: the worker failed to settle it"):
                self.history.write("settle_error", job=args[0], error=str(record.exc_info)[:300])
            elif msg.startswith("schedule %s: enqueued job %s"):
                self.history.write("periodic", schedule=args[0], job=args[1], slot=str(args[3]))
            elif msg.startswith("control connection failed"):
                self.history.write("control_down")
            elif msg.startswith("control connection back"):
                self.history.write("control_up")
            elif msg.startswith("worker %s started: "):
                # queues, handler slots (what bounds its handlers) and connections, as
                # the driver reports them
                self.history.write(
                    "worker_started", queues=args[1], slots=args[2], connections=args[3]
                )
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
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument(
        "--plain", action="store_true", help="only the tasks of queues without a transactional task"
    )
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    history = History(args.history, process=args.name)
    logging.getLogger("taskboard").addHandler(LogRecorder(history))
    settings = load_settings(
        database_url=args.url,
        pool_size=args.pool_size,
        concurrency=args.concurrency,
        lease=args.lease,
        renew_every=args.renew_every,
        worker_name=args.name,
        poll_interval=POLL_INTERVAL_S,
        shutdown_grace=SHUTDOWN_GRACE_S,
        stats_interval=STATS_INTERVAL_S,
    )
    gauge = Gauge(history)
    app = build_app(
        Taskboard(settings), history, gauge, queues=PLAIN_QUEUES if args.plain else None
    )
    app.on_event(recorder(history, gauge))
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
