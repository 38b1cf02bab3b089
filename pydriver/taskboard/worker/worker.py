"""The worker: wires a ledger of held claims to its executor, control and renewal, and runs them.

Connections: exactly `pool_size`, plus one with `cycles_in_flight = 2`.
Two are the worker's own, outside any pool, and reconnect by themselves:
*renewal* (one renew_many for every held claim, every renew_every) and
*control* (LISTEN, claim, and the batched complete/fail/release of ordinary
jobs); with `cycles_in_flight = 2` a third carries control's second cycle. The other `pool_size - 2` form the
handler pool, which only transactional handlers (for their whole run) and
`still_holder()` (for one query) use. At most `concurrency` handlers run at
once (default `pool_size - 2`); a claim asks for no more jobs than there are
free slots nor, when a task is transactional, than there are handler
connections no transactional handler holds, so every job it takes starts
at once, a transactional one with a connection, and renewal never waits
behind handlers. Plain handlers hold no
connection: hundreds of them may run on a pool of ten.

Every decision about who holds a job is the database's: the worker only
reports what the SQL functions answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from taskboard.connections import checked_within
from taskboard.errors import HandlerProcessExited, UnsettledJobs
from taskboard.events import EventHook
from taskboard.periodic import Schedule
from taskboard.settings import Settings
from taskboard.sql import worker as sql_worker
from taskboard.tasks import Task, worker_queues
from taskboard.worker.control import Chore, Control
from taskboard.worker.executor import Executor, Handlers, read_committed
from taskboard.worker.held import Counters, Ledger
from taskboard.worker.host import Dispatcher, HandlerProcesses
from taskboard.worker.renewal import Renewal
from taskboard.worker.retention import Pruner
from taskboard.worker.scheduler import Scheduler
from taskboard.worker.startup import check_database

log = logging.getLogger("taskboard.worker")

SETTLE_AT_EXIT_SECONDS = 10.0  # how long shutdown waits for the last complete/fail/release


class Worker:
    """One worker process's claim loop; `run()` until stopped.

    `tasks` maps task names to handlers; `queries` makes the SQL calls (a
    subclass may observe them); `hooks` receive a JobEvent for everything
    that happens to each claim (see taskboard.events); `schedules` are the
    periodic jobs whose due slots it enqueues (see worker.scheduler).
    With `processes`, its handlers run in those child processes, and it
    claims, renews and settles for all of them (see worker.host).
    """

    def __init__(
        self,
        tasks: Mapping[str, Task],
        settings: Settings,
        *,
        queries: sql_worker.Queries | None = None,
        hooks: Sequence[EventHook] = (),
        schedules: Sequence[Schedule] = (),
        processes: HandlerProcesses | None = None,
    ) -> None:
        self.tasks = dict(tasks)
        self.processes = processes
        self.schedules = list(schedules)
        self.settings = settings
        self.queries = queries or sql_worker.Queries()
        self.queues = worker_queues(self.tasks, settings.queues)
        self.ledger = Ledger(settings.worker_name, tuple(hooks))
        self._stopping = asyncio.Event()  # stop claiming
        self._finished = asyncio.Event()  # everything settled: side tasks end
        self._executor: Handlers | None = None
        self._unsettled = 0  # jobs still held when shutdown gave up settling them

    @property
    def counts(self) -> Counters:
        return self.ledger.counts

    @property
    def running_handlers(self) -> int:
        """Handlers occupying a slot now."""
        return 0 if self._executor is None else self._executor.running

    @property
    def free_slots(self) -> int:
        """Handler slots free for the next claim."""
        if self._executor is None:
            return self.settings.max_handlers
        return self._executor.free_slots

    # -- lifecycle ---------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Work until `stop` is set, then shut down gracefully.

        Waits for the database while it is down. Raises StartupError when
        it cannot work there (no schema, an unsupported version, a login
        without the worker role, ...), UnsettledJobs when it stopped
        holding jobs whose outcome the database did not take in time, and
        re-raises the error of a side task that died.
        """
        stop = stop or asyncio.Event()
        await check_database(self.settings, self.queries, stop)
        if stop.is_set():
            return
        if self.processes is None:
            await self._run([stop], None)
            return
        # Not `stop` itself: a signal after a handler process exited is still the first.
        child_exited = asyncio.Event()
        dispatcher = Dispatcher(
            processes=self.processes,
            tasks=self.tasks,
            settings=self.settings,
            ledger=self.ledger,
            on_child_exit=child_exited.set,
        )
        await dispatcher.open()
        try:
            await self._run([stop, child_exited], dispatcher)
        finally:
            await dispatcher.close()
        if dispatcher.exited:
            raise HandlerProcessExited(self.settings.worker_name, dispatcher.exited)

    async def _run(self, stops: list[asyncio.Event], dispatcher: Dispatcher | None) -> None:
        """Run until one of `stops` is set, then shut down gracefully."""
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            self.settings.database_url,
            min_size=0,
            max_size=self.settings.handler_slots,
            kwargs=self.settings.connection_options(
                autocommit=False, application_name=self.settings.application_name
            ),
            configure=read_committed,
            # After a restart or failover, idle connections are dead: test each
            # before handing it to a handler rather than failing its attempt.
            check=checked_within(self.settings.deadline),
            open=False,
            name="taskboard-handlers",
        )
        await pool.open()
        executor: Handlers = dispatcher or Executor(
            tasks=self.tasks,
            settings=self.settings,
            queries=self.queries,
            ledger=self.ledger,
            pool=pool,
        )
        self._executor = executor
        if executor.max_handlers < self.settings.max_handlers:
            log.warning(
                "worker %s: concurrency %d exceeds its %d handler connections and a task is "
                "transactional: it runs at most %d handlers (run transactional tasks in "
                "workers of their own to go beyond)",
                self.settings.worker_name,
                self.settings.max_handlers,
                self.settings.handler_slots,
                executor.max_handlers,
            )
        control = Control(
            settings=self.settings,
            queries=self.queries,
            ledger=self.ledger,
            executor=executor,
            queues=self.queues,
            connect=self._connect,
            stopping=self._stopping,
            finished=self._finished,
            chores=self._chores(),
            cycles=self.settings.cycles_in_flight if executor.max_handlers > 1 else 1,
        )
        renewal = Renewal(
            settings=self.settings,
            queries=self.queries,
            ledger=self.ledger,
            connect=self._connect,
            finished=self._finished,
        )
        log.info(
            "worker %s started: queues=%s slots=%d connections=%d lease=%gs renew_every=%gs",
            self.settings.worker_name,
            ",".join(self.queues),
            executor.max_handlers,
            self.settings.pool_size,
            self.settings.lease,
            self.settings.renew_interval,
        )
        if self.schedules:
            log.info(
                "worker %s schedules: %s",
                self.settings.worker_name,
                ", ".join(f"{s.name} ({s.cron.expression} UTC)" for s in self.schedules),
            )
        side = [
            asyncio.create_task(control.run(), name="taskboard-control"),
            asyncio.create_task(renewal.run(), name="taskboard-renewal"),
            asyncio.create_task(renewal.watchdog(), name="taskboard-watchdog"),
            asyncio.create_task(self._report(), name="taskboard-stats"),
        ]
        stoppers = [asyncio.create_task(s.wait(), name="taskboard-stop") for s in stops]
        try:
            done, _ = await asyncio.wait([*stoppers, *side], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task not in stoppers:
                    # A side task never ends by itself while the worker runs.
                    raise RuntimeError(
                        f"{task.get_name()} stopped unexpectedly"
                    ) from task.exception()
            await self._shutdown(side, executor, control)
        finally:
            for stopper in stoppers:
                stopper.cancel()
            self._finished.set()
            for task in side:
                task.cancel()
            await asyncio.gather(*side, return_exceptions=True)
            await pool.close()
            log.info("worker %s stopped: %s", self.settings.worker_name, self.counts.line())
        if self._unsettled:
            raise UnsettledJobs(self.settings.worker_name, self._unsettled)

    async def _connect(self, url: str) -> psycopg.AsyncConnection[Any]:
        return await psycopg.AsyncConnection.connect(
            url,
            **self.settings.connection_options(
                application_name=self.settings.application_name, url=url
            ),
        )

    def _chores(self) -> list[Chore]:
        """What the control loop does between claims: the periodic schedules' slots, and
        retention's prune when it is set."""
        chores: list[Chore] = []
        if self.schedules:
            chores.append(Scheduler(self.schedules, self.queries))
        if self.settings.retention is not None:
            chores.append(Pruner(self.settings.retention, self.queries))
        return chores

    async def _shutdown(
        self, side: list[asyncio.Task[None]], executor: Handlers, control: Control
    ) -> None:
        """Stop claiming, let handlers finish within the grace (those of a claim still on
        its way too: the database handed them out), release the rest."""
        self._stopping.set()
        self.ledger.wake.set()
        log.info(
            "worker %s stopping: waiting up to %gs for %d handler(s)",
            self.settings.worker_name,
            self.settings.shutdown_grace,
            executor.running,
        )
        deadline = time.monotonic() + self.settings.shutdown_grace
        while (executor.running or control.claiming) and time.monotonic() < deadline:
            await self._sleep_until_change(deadline - time.monotonic(), side)
        for held in self.ledger:
            self.ledger.release_at_exit(held)
        deadline = time.monotonic() + SETTLE_AT_EXIT_SECONDS
        while len(self.ledger) and time.monotonic() < deadline:
            self.ledger.wake.set()
            await self._sleep_until_change(deadline - time.monotonic(), side)
        self._unsettled = len(self.ledger)
        if self._unsettled:
            log.warning(
                "worker %s exits holding %d job(s) it could not settle; their leases will expire",
                self.settings.worker_name,
                len(self.ledger),
            )

    async def _sleep_until_change(self, timeout: float, side: list[asyncio.Task[None]]) -> None:
        changed = asyncio.create_task(self.ledger.changed.wait())
        done, _ = await asyncio.wait(
            [changed, *side], timeout=max(timeout, 0), return_when=asyncio.FIRST_COMPLETED
        )
        changed.cancel()
        self.ledger.changed.clear()
        for task in done:
            if task is not changed:
                raise RuntimeError(f"{task.get_name()} stopped unexpectedly") from task.exception()

    async def _report(self) -> None:
        while not self._finished.is_set():
            try:
                await asyncio.wait_for(self._finished.wait(), self.settings.stats_interval)
            except TimeoutError:
                log.info("worker %s: %s", self.settings.worker_name, self.counts.line())
