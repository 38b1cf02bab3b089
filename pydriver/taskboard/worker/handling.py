"""A handler process: runs the handlers of the jobs its host's claimer hands it.

`taskboard worker --processes N` runs one claimer (worker.host) and N of
these. A handler process claims, renews and settles nothing itself: it
runs each job it is handed at once, with the executor a single worker
uses, and tells the claimer how the handler ended; the claimer sends
that outcome to the database. A transactional handler completes on its
own connection, inside its transaction, as in a single worker, and says
what the database answered. `still_holder()` asks the database on this
process's own pool, with the claim's token.

What it says (messages on the wire): ready (its pid and slots), alive
(every HEARTBEAT_SECONDS), settled (an outcome for the claimer to send),
sending (a transactional completion is on its way), resolved (what the
database answered it), amended (a transactional completion that did not
commit becomes this outcome), abandoned, checked (a holder check's
answer) and ended (the handler's run is over: its slot is free). What it
hears: run (claims to run), lost (stop one: the claimer gave it up) and
exit. When the claimer goes away (the socket closes), it exits: nobody
is left to tell.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import socket
import uuid
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from taskboard.connections import checked_within
from taskboard.settings import Settings
from taskboard.sql import worker as sql_worker
from taskboard.tasks import Task
from taskboard.worker.executor import Executor, read_committed
from taskboard.worker.held import Held, Ledger, State
from taskboard.worker.outcomes import Outcome
from taskboard.worker.wire import Message, Wire

log = logging.getLogger("taskboard.worker")

HEARTBEAT_SECONDS = 0.5  # at most; a quarter of renew_every when that is shorter
DRAIN_SECONDS = 2.0  # for the last messages to leave at exit


class Forwarding(Ledger):
    """A handler process's ledger: what the executor decides goes to the claimer.

    It holds a claim only while its handler runs (and a transactional
    completion is on its way); an outcome for the claimer to send leaves it at once.
    """

    def __init__(self, worker: str, wire: Wire) -> None:
        super().__init__(worker)
        self.wire = wire

    def settle(self, held: Held, outcome: Outcome) -> bool:
        if not super().settle(held, outcome):
            return False
        self._drop(held)
        self.wire.send(("settled", held.token, outcome))
        return True

    def settle_in_transaction(self, held: Held, outcome: Outcome) -> bool:
        if not super().settle_in_transaction(held, outcome):
            return False
        self.wire.send(("sending", held.token, outcome))
        return True

    def resolve(self, held: Held, state: State, answer: Any = None) -> None:
        if held.state is State.SENDING:
            self.wire.send(("resolved", held.token, state.value, answer))
        super().resolve(held, state, answer)

    def amend(self, held: Held, outcome: Outcome) -> None:
        if held.state is not State.SENDING or not self.holds(held):
            return
        held.state = State.SETTLING
        held.outcome = outcome
        self._drop(held)
        self.wire.send(("amended", held.token, outcome))

    def abandon(self, held: Held, why: str) -> bool:
        if held.state is not State.SENDING or not self.holds(held):
            return False
        held.state = State.LOST
        held.ctx.mark_lost()
        self._drop(held)
        self.wire.send(("abandoned", held.token, why))
        return True

    def withdraw(self, held: Held) -> None:
        """The claimer gave the claim up (it logged why): stop its handler, quietly."""
        if held.state is not State.RUNNING or not self.holds(held):
            return
        held.state = State.LOST
        held.ctx.mark_lost()
        if held.runner is not None and not held.runner.done():
            held.runner.cancel()
        self._drop(held)

    def event(self, held: Held, kind: str, **fields: Any) -> None:
        # The claimer tells the hooks; only a holder check happens here alone.
        if kind == "holder_checked":
            self.wire.send(("checked", held.token, fields.get("answer")))


async def serve(
    fd: int, tasks: Mapping[str, Task], settings: Settings, stop: asyncio.Event
) -> None:
    """Run the handlers the claimer on socket `fd` hands over, until it says exit, it goes
    away, or `stop` is set (the parent died)."""
    told = asyncio.Event()  # the claimer said exit, or went away
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
        settings.database_url,
        min_size=0,
        max_size=settings.handler_slots,
        kwargs=settings.connection_options(
            autocommit=False, application_name=settings.application_name
        ),
        configure=read_committed,
        check=checked_within(settings.deadline),
        open=False,
        name="taskboard-handlers",
    )
    await pool.open()
    parts: list[tuple[Executor, Forwarding]] = []

    def on_batch(batch: list[Message]) -> None:
        if parts and not told.is_set() and not _handle(batch, *parts[0]):
            told.set()

    def on_unsendable(message: Message, error: Exception) -> None:
        log.error("a handler process could not tell its claimer %s: %s", message[0], error)

    wire = await Wire.open(socket.socket(fileno=fd), on_batch, told.set, on_unsendable)
    ledger = Forwarding(settings.worker_name, wire)
    executor = Executor(
        tasks=tasks, settings=settings, queries=sql_worker.Queries(), ledger=ledger, pool=pool
    )
    parts.append((executor, ledger))
    wire.send(("ready", os.getpid(), executor.max_handlers))
    beat = asyncio.create_task(_heartbeat(wire, settings), name="taskboard-heartbeat")
    stopped = asyncio.create_task(stop.wait())
    ended = asyncio.create_task(told.wait())
    try:
        await asyncio.wait([stopped, ended], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (beat, stopped, ended):
            task.cancel()
        for held in ledger:
            ledger.withdraw(held)
        await wire.close(DRAIN_SECONDS)
        await pool.close()


def _handle(batch: list[Message], executor: Executor, ledger: Forwarding) -> bool:
    """Act on one batch from the claimer; False once it said exit."""
    for message in batch:
        match message:
            case ("run", rows, sent, sent_at):
                _run(rows, sent, sent_at, executor, ledger, ledger.wire)
            case ("lost", token):
                held = ledger.get(token)
                if held is not None:
                    ledger.withdraw(held)
            case ("exit",):
                return False
    return True


def _run(
    rows: list[sql_worker.Claimed],
    sent: float,
    sent_at: dt.datetime | None,
    executor: Executor,
    ledger: Forwarding,
    wire: Wire,
) -> None:
    executor.start_all(rows, sent, sent_at)
    for row in rows:
        held = ledger.get(row.token)
        if held is None or held.runner is None:
            wire.send(("ended", row.token))
            continue
        held.runner.add_done_callback(_ended(wire, row.token))


def _ended(wire: Wire, token: uuid.UUID) -> Any:
    def ended(_: asyncio.Task[None]) -> None:
        wire.send(("ended", token))

    return ended


async def _heartbeat(wire: Wire, settings: Settings) -> None:
    every = min(HEARTBEAT_SECONDS, settings.renew_interval / 4)
    while True:
        wire.send(("alive",))
        await asyncio.sleep(every)
