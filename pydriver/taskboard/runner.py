"""Signals: run a worker until SIGTERM or SIGINT. The only module that installs signal handlers.

The first signal stops claiming and shuts down gracefully: handlers get
shutdown_grace seconds, then what is still held is released. A second
signal exits at once, leaving leases to expire.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable

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
