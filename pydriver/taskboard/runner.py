"""Signals: run a worker until SIGTERM or SIGINT. The only module that installs signal handlers.

The first signal stops claiming and shuts down gracefully: handlers get
shutdown_grace seconds, then what is still held is released. A second
signal exits at once, leaving leases to expire.

``taskboard worker --processes N`` runs one worker, the claimer, and N
handler processes it starts (`start_handler_process`; see worker.host).
The handler processes (`supervised`) ignore SIGTERM and SIGINT and take
their stop from the claimer alone, over their socket. So a signal sent to
the whole group (systemd's default KillMode=control-group, ``pkill -f``)
reaches the claimer, which drains them as a single worker drains its
handlers. A handler process stops when the claimer dies (DRAIN_SIGNAL on
Linux, or its socket closing): nobody is left to tell how a handler ended.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence

log = logging.getLogger(__name__)

EXIT_AT_ONCE = 130  # the second SIGINT/SIGTERM: leases are left to expire
# What a handler process gets when its parent dies (it ignores SIGTERM and SIGINT).
DRAIN_SIGNAL = signal.SIGUSR1
ABANDON_AFTER_SECONDS = 2.0  # how long a task that outlives the worker may take to end


def run_until_signalled(
    work: Callable[[asyncio.Event], Awaitable[None]], *, supervised: bool = False
) -> None:
    """Run `work(stop)` in a new event loop; the first SIGTERM/SIGINT sets `stop`.

    `supervised` (a handler process of ``--processes N``): SIGTERM and
    SIGINT are ignored; DRAIN_SIGNAL (the parent died) sets `stop`.

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
                log.warning("%s: the parent process died; stopping", signal.Signals(signum).name)
                stop.set()

        if supervised:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, signal.SIG_IGN)
            loop.add_signal_handler(DRAIN_SIGNAL, on_drain, DRAIN_SIGNAL)
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


# -- the handler processes of `taskboard worker --processes N` ------------------------

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies (Linux)


def start_handler_process(command: Sequence[str], fd: int) -> subprocess.Popen[bytes]:
    """Start `command` (a handler process, supervised) with file descriptor `fd` passed on.

    It runs in a process group of its own and ignores SIGTERM and SIGINT
    from birth, so a terminal's Ctrl-C or a signal to the whole group
    reaches the claimer alone, which stops it; on Linux it gets
    DRAIN_SIGNAL when the parent dies without stopping it (kill -9).
    """
    prctl = _prctl()
    return subprocess.Popen(
        list(command),
        process_group=0,
        pass_fds=(fd,),
        preexec_fn=functools.partial(_start_supervised, os.getpid(), prctl),
    )


def _prctl() -> Callable[..., int] | None:
    """prctl(2), looked up before the fork (the child then only calls it); None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    return prctl


def _start_supervised(parent: int, prctl: Callable[..., int] | None) -> None:
    """In a new child, before exec: ignore SIGTERM and SIGINT from birth, and ask for
    DRAIN_SIGNAL when `parent` dies (with `prctl`: Linux; elsewhere a child outlives a
    parent killed by SIGKILL until it notices its socket closed)."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    if prctl is None:
        return
    prctl(PR_SET_PDEATHSIG, DRAIN_SIGNAL)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), DRAIN_SIGNAL)
