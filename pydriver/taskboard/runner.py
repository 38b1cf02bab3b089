"""Signals: run a worker until SIGTERM or SIGINT. The only module that installs signal handlers.

The first signal stops claiming and shuts down gracefully: handlers get
shutdown_grace seconds, then what is still held is released. A second
signal exits at once, leaving leases to expire.

`supervise` runs several worker processes under one parent
(``taskboard worker --processes N``): it passes signals on and stops them
all when one of them exits on its own.
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
ABANDON_AFTER_SECONDS = 2.0  # how long a task that outlives the worker may take to end


def run_until_signalled(work: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run `work(stop)` in a new event loop; the first SIGTERM/SIGINT sets `stop`.

    Once `work` returns, what still runs on the loop (a handler that ignores
    its cancellation, say) gets ABANDON_AFTER_SECONDS to end and is then
    left behind instead of waited for. (A handler blocked in a thread of the
    loop's default executor can still hold up the interpreter's exit;
    sync handlers run in daemon threads of their own and do not.)
    """

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def on_signal(signum: int) -> None:
            if stop.is_set():
                log.warning("second %s: exiting at once", signal.Signals(signum).name)
                logging.shutdown()
                os._exit(EXIT_AT_ONCE)
            log.info("%s: shutting down", signal.Signals(signum).name)
            stop.set()

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
    """Run each of `commands` as a child process, until a signal or until one exits.

    The first SIGTERM/SIGINT is sent on to every child, and the parent waits
    for them; a second is sent on too (the children then exit at once).
    A child that exits on its own (a crash, a kill, bad settings) is logged
    with its status, the others get SIGTERM, and the parent returns 1 once
    they have exited, so that a process manager restarts the whole set. A
    child still running `shutdown_grace` + STOP_MARGIN_SECONDS after it was
    told to stop is killed.

    Each child runs in a process group of its own, so that a terminal's
    Ctrl-C reaches it once, through the parent; on Linux it gets SIGTERM
    when the parent dies without stopping it (kill -9).
    Returns 0 when every child exited 0 after a signal, EXIT_AT_ONCE when one
    of them exited at once on a second signal, else 1.
    """
    children: dict[int, subprocess.Popen[bytes]] = {}  # by index, from 1
    signals: list[int] = []
    parent = os.getpid()

    def on_signal(signum: int, frame: object) -> None:
        signals.append(signum)
        for child in children.values():
            if child.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.send_signal(signum)

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
                preexec_fn=functools.partial(_die_with_parent, parent),
            )
            children[index] = child
            log.info("worker process %d of %d started: pid %d", index, len(commands), child.pid)
        announced = 0
        while len(statuses) < len(children):
            if len(signals) > announced:
                log.info(
                    "%s: stopping %d worker process(es)",
                    signal.Signals(signals[announced]).name,
                    len(children) - len(statuses),
                )
                announced = len(signals)
                if stop_deadline is None:
                    stop_deadline = time.monotonic() + shutdown_grace + STOP_MARGIN_SECONDS
            for index, child in children.items():
                status = child.poll()
                if index in statuses or status is None:
                    continue
                statuses[index] = status
                stopping = bool(signals) or crashed is not None
                if stopping:
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
                for other in children.values():
                    if other.poll() is None:
                        with contextlib.suppress(ProcessLookupError):
                            other.send_signal(signal.SIGTERM)
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


def _exit_text(status: int) -> str:
    """`Popen.returncode` in words: "exit status 3", "killed by SIGKILL"."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    return f"exit status {status}"


def _die_with_parent(parent: int) -> None:
    """In a new child, before exec: ask Linux for SIGTERM when `parent` dies.

    Elsewhere (no prctl) nothing: the child then outlives a parent killed by SIGKILL.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
