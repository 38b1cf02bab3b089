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


def run_until_signalled(work: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run `work(stop)` in a new event loop; the first SIGTERM/SIGINT sets `stop`."""

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

    asyncio.run(main())
    # Abandoned sync handlers run in daemon threads: they do not hold up the exit.
