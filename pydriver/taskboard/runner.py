"""Signals: run a worker until SIGTERM or SIGINT. The only module that installs signal handlers.

The first signal stops claiming and shuts down gracefully: handlers get
shutdown_grace seconds, then what is still held is released. A second
signal exits at once, leaving leases to expire.

`supervise` runs several worker processes under one parent
(``taskboard worker --processes N``): it passes signals on and stops them
all when one of them exits on its own. Its children (`supervised`) ignore
SIGTERM and SIGINT and take their stop from the parent alone: DRAIN_SIGNAL
to shut down gracefully (repeated, the same shutdown), AT_ONCE_SIGNAL to
exit at once. So a signal sent to the whole group (systemd's default
KillMode=control-group, ``pkill -f``) reaches each child once, through the
parent, and a parent that dies while its children drain does not turn the
drain into an exit at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence

log = logging.getLogger(__name__)

EXIT_AT_ONCE = 130  # the second SIGINT/SIGTERM: leases are left to expire
# How `supervise` stops its children (they ignore SIGTERM and SIGINT).
DRAIN_SIGNAL = signal.SIGUSR1
AT_ONCE_SIGNAL = signal.SIGUSR2
ABANDON_AFTER_SECONDS = 2.0  # how long a task that outlives the worker may take to end


def run_until_signalled(
    work: Callable[[asyncio.Event], Awaitable[None]], *, supervised: bool = False
) -> None:
    """Run `work(stop)` in a new event loop; the first SIGTERM/SIGINT sets `stop`.

    `supervised` (a child of `supervise`): SIGTERM and SIGINT are ignored;
    DRAIN_SIGNAL sets `stop` (again: nothing more), AT_ONCE_SIGNAL exits at
    once.

    Once `work` returns, what still runs on the loop (a handler that ignores
    its cancellation, say) gets ABANDON_AFTER_SECONDS to end and is then
    left behind instead of waited for. (A handler blocked in a thread of the
    loop's default executor can still hold up the interpreter's exit;
    sync handlers run in daemon threads of their own and do not.)
    """

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def exit_at_once(why: str) -> None:
            log.warning("%s: exiting at once", why)
            logging.shutdown()
            os._exit(EXIT_AT_ONCE)

        def on_signal(signum: int) -> None:
            if stop.is_set():
                exit_at_once(f"second {signal.Signals(signum).name}")
            log.info("%s: shutting down", signal.Signals(signum).name)
            stop.set()

        def on_drain(signum: int) -> None:
            if not stop.is_set():
                log.info("%s from the parent process: shutting down", signal.Signals(signum).name)
                stop.set()

        if supervised:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, signal.SIG_IGN)
            loop.add_signal_handler(DRAIN_SIGNAL, on_drain, DRAIN_SIGNAL)
            loop.add_signal_handler(
                AT_ONCE_SIGNAL,
                exit_at_once,
                f"{signal.Signals(AT_ONCE_SIGNAL).name} from the parent process",
            )
        else:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, on_signal, signum)
        await work(stop)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        _abandon_the_rest(loop)
    # Abandoned sync handlers run in daemon threads: they do not hold up the exit.


def _abandon_the_rest(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what still runs on `loop`, wait a bounded time for it, and close the loop."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        _, stubborn = loop.run_until_complete(asyncio.wait(pending, timeout=ABANDON_AFTER_SECONDS))
        if stubborn:
            log.warning(
                "%d task(s) ignored their cancellation; exiting without them", len(stubborn)
            )
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


# -- several worker processes under one parent ---------------------------------------

CHILD_POLL_SECONDS = 0.1  # how often the parent looks for a child that has exited
STOP_MARGIN_SECONDS = 15.0  # beyond a child's shutdown_grace before the parent kills it
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies (Linux)


def supervise(commands: Sequence[Sequence[str]], *, shutdown_grace: float) -> int:
    """Run each of `commands` (supervised workers) as a child process, until a signal
    or until one exits.

    The first SIGTERM/SIGINT asks every child to drain (DRAIN_SIGNAL), and the
    parent waits for them; a second asks them to exit at once
    (AT_ONCE_SIGNAL). The requests are sent from the parent's loop, not its
    signal handler, so a child started while the signal arrived gets them
    too. A child that exits on its own (a crash, a kill, bad settings) is
    logged with its status, the others are asked to drain, and the parent
    returns 1 once they have exited, so that a process manager restarts the
    whole set. A child still running `shutdown_grace` + STOP_MARGIN_SECONDS
    after it was asked to stop is killed.

    Each child runs in a process group of its own and ignores SIGTERM and
    SIGINT from birth, so a terminal's Ctrl-C or a signal to the whole group
    reaches it once, through the parent; on Linux it is asked to drain when
    the parent dies without stopping it (kill -9). A child the parent's
    request ended before it could handle it (still starting) held nothing.
    Returns 0 when every child stopped cleanly after a signal, EXIT_AT_ONCE
    when they were asked to exit at once, else 1.
    """
    children: dict[int, subprocess.Popen[bytes]] = {}  # by index, from 1
    asked: dict[int, int] = {}  # index -> how far it was asked to stop: 1 drain, 2 at once
    signals: list[int] = []
    parent = os.getpid()

    def on_signal(signum: int, frame: object) -> None:
        signals.append(signum)

    previous = {
        signum: signal.signal(signum, on_signal) for signum in (signal.SIGTERM, signal.SIGINT)
    }
    crashed: int | None = None  # the child that exited on its own, first
    stop_deadline: float | None = None
    statuses: dict[int, int] = {}
    try:
        for index, command in enumerate(commands, start=1):
            if signals:
                break
            child = subprocess.Popen(
                list(command),
                process_group=0,
                preexec_fn=functools.partial(_start_supervised, parent),
            )
            children[index] = child
            log.info("worker process %d of %d started: pid %d", index, len(commands), child.pid)
        announced = 0
        while len(statuses) < len(children):
            if len(signals) > announced:
                log.info(
                    "%s: stopping %d worker process(es)%s",
                    signal.Signals(signals[announced]).name,
                    len(children) - len(statuses),
                    "" if announced == 0 else " at once",
                )
                announced = len(signals)
                if stop_deadline is None:
                    stop_deadline = time.monotonic() + shutdown_grace + STOP_MARGIN_SECONDS
            wanted = min(len(signals), 2) or (1 if crashed is not None else 0)
            for index, child in children.items():
                if index not in statuses and asked.get(index, 0) < wanted:
                    asked[index] = wanted
                    with contextlib.suppress(ProcessLookupError):
                        child.send_signal(DRAIN_SIGNAL if wanted == 1 else AT_ONCE_SIGNAL)
            for index, child in children.items():
                status = child.poll()
                if index in statuses or status is None:
                    continue
                statuses[index] = _as_asked(status, asked.get(index, 0))
                if asked.get(index, 0):
                    log.info(
                        "worker process %d (pid %d) stopped (%s)",
                        index,
                        child.pid,
                        _exit_text(status),
                    )
                    continue
                crashed = index
                log.error(
                    "worker process %d (pid %d) stopped on its own (%s): stopping the others",
                    index,
                    child.pid,
                    _exit_text(status),
                )
                stop_deadline = time.monotonic() + shutdown_grace + STOP_MARGIN_SECONDS
            if stop_deadline is not None and time.monotonic() > stop_deadline:
                for index, child in children.items():
                    if index not in statuses and child.poll() is None:
                        log.error(
                            "worker process %d (pid %d) did not stop in time: killing it",
                            index,
                            child.pid,
                        )
                        child.kill()
                stop_deadline = None
            time.sleep(CHILD_POLL_SECONDS)
    finally:
        for child in children.values():  # only on an error of the parent itself
            if child.poll() is None:
                child.kill()
                child.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if crashed is not None or not signals:
        return 1
    if all(status == 0 for status in statuses.values()):
        return 0
    return EXIT_AT_ONCE if EXIT_AT_ONCE in statuses.values() else 1


def _as_asked(status: int, asked: int) -> int:
    """A child's exit status, with the parent's own request counted as what it asked for:
    a child ended by DRAIN_SIGNAL before it could handle it was still starting and held
    nothing (0); one ended by AT_ONCE_SIGNAL exited at once (EXIT_AT_ONCE)."""
    if asked >= 1 and status == -DRAIN_SIGNAL:
        return 0
    if asked >= 2 and status == -AT_ONCE_SIGNAL:
        return EXIT_AT_ONCE
    return status


def _exit_text(status: int) -> str:
    """`Popen.returncode` in words: "exit status 3", "killed by SIGKILL"."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    return f"exit status {status}"


def _start_supervised(parent: int) -> None:
    """In a new child, before exec: ignore SIGTERM and SIGINT from birth (the parent
    passes stops on as DRAIN_SIGNAL and AT_ONCE_SIGNAL), and on Linux ask for
    DRAIN_SIGNAL when `parent` dies.

    Elsewhere (no prctl) a child outlives a parent killed by SIGKILL.
    """
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, DRAIN_SIGNAL)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), DRAIN_SIGNAL)
