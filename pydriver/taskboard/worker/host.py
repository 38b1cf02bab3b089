"""One claimer for a host's handler processes (`taskboard worker --processes N`).

The claimer is a worker like any other (its control connection claims and
settles in batches, its renewal connection renews every held lease), but
its handlers run in N child processes (worker.handling). Each claimed job
goes at once to the child with the most free slots, so a claim asks for
no more jobs than the children can start now, and a child never holds a
job it is not running. The claimer holds every lease; a child tells it
how each handler ended.

A child that exits on its own (a crash, kill -9) fails the jobs it was
running (their attempt ended with it) and stops the set: the claimer
shuts down gracefully, as on SIGTERM, and the command exits 1 for the
process manager to restart it. A child that stops answering (SIGSTOP, a
handler that blocks its event loop) for SILENT_FOR of the lease is
killed, with the same ending: the claimer would otherwise renew the
leases of jobs nobody runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import pickle
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from taskboard.settings import Settings
from taskboard.sql import worker as sql_worker
from taskboard.tasks import Task
from taskboard.worker.held import Held, Ledger, State, context_of
from taskboard.worker.outcomes import Fail, Release, describe
from taskboard.worker.wire import Message, Wire

log = logging.getLogger("taskboard.worker")

READY_TIMEOUT_SECONDS = 60.0  # for a child to import the app and say it is ready
EXIT_TIMEOUT_SECONDS = 5.0  # for a child told to exit, before it is killed
SILENT_FOR = 2 / 3  # of the lease: a child quiet that long is killed


@dataclass(frozen=True)
class HandlerProcesses:
    """The handler processes a host's claimer runs: each one's command (`--handler-fd=FD`,
    its end of the socket pair, is added), and how to start one with that fd passed on."""

    commands: Sequence[Sequence[str]]
    start: Callable[[Sequence[str], int], subprocess.Popen[bytes]]


@dataclass(eq=False)
class Child:
    """One handler process: its process, its end of the wire, and what it runs."""

    index: int
    process: subprocess.Popen[bytes]
    wire: Wire = field(init=False)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    slots: int = 0
    gone: bool = False  # its socket closed: it exited, or is about to
    heard: float = field(default_factory=time.monotonic)
    running: dict[uuid.UUID, Held] = field(default_factory=dict)
    why_killed: str | None = None

    @property
    def free(self) -> int:
        return self.slots - len(self.running)

    def describe(self) -> str:
        return f"handler process {self.index} (pid {self.process.pid})"


class Dispatcher:
    """The claimer's executor: hands each claim to a child with a free slot."""

    def __init__(
        self,
        *,
        processes: HandlerProcesses,
        tasks: dict[str, Task],
        settings: Settings,
        ledger: Ledger,
        on_child_exit: Callable[[], None],
    ) -> None:
        self.commands = [list(c) for c in processes.commands]
        self.start_child = processes.start
        self.tasks = tasks
        self.settings = settings
        self.ledger = ledger
        self.on_child_exit = on_child_exit
        self.children: list[Child] = []
        self.running = 0
        self.exited: list[str] = []  # how each child that exited on its own ended
        self._watchers: list[asyncio.Task[None]] = []
        self._closing = False

    @property
    def max_handlers(self) -> int:
        return sum(child.slots for child in self.children)

    @property
    def free_slots(self) -> int:
        return self.max_handlers - self.running

    # -- the children -------------------------------------------------------------------

    async def open(self) -> None:
        """Start every child and wait until each is ready (RuntimeError when one is not)."""
        try:
            for index, command in enumerate(self.commands, start=1):
                ours, theirs = socket.socketpair()
                try:
                    fd = theirs.fileno()
                    process = self.start_child([*command, f"--handler-fd={fd}"], fd)
                finally:
                    theirs.close()
                child = Child(index, process)
                child.wire = await Wire.open(
                    ours,
                    functools.partial(self._batch, child),
                    functools.partial(self._closed, child),
                    functools.partial(self._unsendable, child),
                )
                self.children.append(child)
                log.info(
                    "handler process %d of %d started: pid %d",
                    index,
                    len(self.commands),
                    process.pid,
                )
            for child in self.children:
                await self._ready(child)
        except BaseException:
            await self.close()
            raise
        self._watchers.append(asyncio.create_task(self._watch(), name="taskboard-handlers-watch"))

    async def _ready(self, child: Child) -> None:
        waiters = [
            asyncio.create_task(child.ready.wait()),
            asyncio.create_task(child.wire.closed.wait()),
        ]
        await asyncio.wait(
            waiters, timeout=READY_TIMEOUT_SECONDS, return_when=asyncio.FIRST_COMPLETED
        )
        for waiter in waiters:
            waiter.cancel()
        if child.ready.is_set():
            return
        status = await asyncio.to_thread(_wait, child.process, EXIT_TIMEOUT_SECONDS)
        raise RuntimeError(f"{child.describe()} did not start ({_exit_text(status)})")

    async def close(self) -> None:
        """Tell every child to exit, wait for them, kill those that do not."""
        self._closing = True
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        for child in self.children:
            child.wire.send(("exit",))
        await asyncio.gather(*(c.wire.close(EXIT_TIMEOUT_SECONDS) for c in self.children))
        for child in self.children:
            status = await asyncio.to_thread(_wait, child.process, EXIT_TIMEOUT_SECONDS)
            if status is None:
                log.error("%s did not exit in time: killing it", child.describe())
                child.process.kill()
                status = await asyncio.to_thread(child.process.wait)
            if child.why_killed is None:
                log.info("%s stopped (%s)", child.describe(), _exit_text(status))

    def _batch(self, child: Child, batch: list[Message]) -> None:
        child.heard = time.monotonic()
        for message in batch:
            self._heard(child, message)

    def _closed(self, child: Child) -> None:
        child.gone = True
        if not self._closing:
            self._watchers.append(
                asyncio.create_task(self._child_gone(child), name="taskboard-handlers-gone")
            )

    async def _watch(self) -> None:
        """Kill a child that has said nothing for SILENT_FOR of the lease."""
        silent_for = self.settings.lease * SILENT_FOR
        while True:
            await asyncio.sleep(min(1.0, self.settings.renew_interval / 4))
            now = time.monotonic()
            for child in self.children:
                if not child.gone and child.why_killed is None and now - child.heard > silent_for:
                    child.why_killed = f"it said nothing for {now - child.heard:.1f}s"
                    log.error("%s stopped answering: killing it", child.describe())
                    with contextlib.suppress(ProcessLookupError):
                        child.process.kill()

    async def _child_gone(self, child: Child) -> None:
        status = await asyncio.to_thread(_wait, child.process, EXIT_TIMEOUT_SECONDS)
        how = child.why_killed or _exit_text(status)
        if self._closing:
            return
        self.exited.append(f"{child.describe()}: {how}")
        log.error("%s exited on its own (%s): stopping the others", child.describe(), how)
        for held in list(child.running.values()):
            if held.state is State.RUNNING:
                self.ledger.settle(held, Fail(f"the handler process running it exited ({how})"))
            elif held.state is State.SENDING:
                self.ledger.abandon(held, f"the handler process completing it exited ({how})")
            self._ended(child, held.token)
        child.slots = 0
        self.on_child_exit()

    # -- the claims ---------------------------------------------------------------------

    def start_all(
        self, rows: Sequence[sql_worker.Claimed], sent: float, sent_at: dt.datetime | None
    ) -> None:
        """Hold each of one claim's rows and hand it to the child with the most free slots."""
        if not rows:
            return
        handed: dict[int, tuple[Child, list[sql_worker.Claimed]]] = {}
        loop = asyncio.get_running_loop()
        live = [c for c in self.children if not c.gone]
        for row in rows:
            child = max(live, key=lambda c: c.free, default=None)
            held = Held(
                row,
                self.tasks.get(row.task),
                context_of(row, _never),
                safe_until=sent + self.settings.lease,
                sent_at=sent_at,
            )
            self.ledger.add(held)
            if child is None or child.free <= 0:
                # Claimed as a handler process exited: the set is stopping; hand it back.
                self.ledger.settle(held, Release())
                continue
            if self.ledger.hooks:
                self.ledger.event(held, "started")
            runner: asyncio.Future[None] = loop.create_future()
            runner.add_done_callback(functools.partial(self._runner_done, child, held))
            held.runner = runner
            child.running[held.token] = held
            self.running += 1
            handed.setdefault(child.index, (child, []))[1].append(row)
        for child, batch in handed.values():
            child.wire.send(("run", batch, sent, sent_at))

    def _runner_done(self, child: Child, held: Held, runner: asyncio.Future[None]) -> None:
        """The claim's handler is over here: cancelled (lost or shut down) or ended there."""
        child.running.pop(held.token, None)
        if runner.cancelled():
            child.wire.send(("lost", held.token))  # the child stops its handler
        self.running -= 1
        if held.state is State.RUNNING and self.ledger.holds(held) and not runner.cancelled():
            # A handler can end no way that leaves its job running and renewed forever.
            self.ledger.settle(held, Fail("the handler ended without an outcome"))
        self.ledger.wake.set()
        self.ledger.changed.set()

    def _unsendable(self, child: Child, message: Message, error: Exception) -> None:
        """A message to `child` would not pickle: of a claim batch, the rows that would go
        again, alone; the one that would not is failed for good (it never can be handed
        over: its payload is nested too deep to pickle, say)."""
        if message[0] != "run":
            log.error("could not tell %s %s: %s", child.describe(), message[0], error)
            return
        _, rows, sent, sent_at = message
        for row in rows:
            try:
                pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - whatever pickle raises
                held = child.running.get(row.token)
                if held is not None:
                    why = f"the job could not be handed to a handler process: {describe(exc)}"
                    log.warning("job %s: %s", row.job_id, why, extra=held.log_extra)
                    self.ledger.settle(held, Fail(why, retry=False))
                    self._ended(child, row.token)
                continue
            child.wire.send(("run", [row], sent, sent_at))

    def _ended(self, child: Child, token: uuid.UUID) -> None:
        held = child.running.get(token)
        if held is not None and held.runner is not None and not held.runner.done():
            held.runner.set_result(None)

    def _heard(self, child: Child, message: Message) -> None:
        kind, *rest = message
        if kind == "alive":
            return
        if kind == "ready":
            child.slots = rest[1]
            child.ready.set()
            return
        token = rest[0]
        if kind == "ended":
            self._ended(child, token)
            return
        held = self.ledger.get(token)
        if held is None:
            return  # given up here already: what the child says no longer counts
        match message:
            case ("settled", _, outcome):
                self.ledger.settle(held, outcome)
            case ("sending", _, outcome):
                if self.ledger.settle_in_transaction(held, outcome):
                    self.ledger.note_sent(held)
            case ("resolved", _, state, answer):
                self.ledger.resolve(held, State(state), answer)
            case ("amended", _, outcome):
                self.ledger.amend(held, outcome)
            case ("abandoned", _, why):
                self.ledger.abandon(held, why)
            case ("checked", _, answer):
                self.ledger.event(held, "holder_checked", answer=answer)


async def _never() -> bool:
    return False  # the claimer's own copy of a claim is never asked; the child's is


def _wait(process: subprocess.Popen[bytes], timeout: float) -> int | None:
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def _exit_text(status: int | None) -> str:
    """`Popen.returncode` in words: "exit status 3", "killed by SIGKILL"."""
    if status is None:
        return "still running"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    return f"exit status {status}"
