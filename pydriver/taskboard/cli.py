"""The ``taskboard`` command; the only place that installs signal handlers."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskboard.app import Taskboard

log = logging.getLogger(__name__)

EXIT_AT_ONCE = 130  # the second SIGINT/SIGTERM: leases are left to expire


def run_until_signalled(app: Taskboard, **overrides: Any) -> None:
    """Run a worker until SIGTERM or SIGINT; a second signal exits at once.

    The first signal stops claiming and shuts down gracefully: handlers get
    shutdown_grace seconds, then what is still held is released.
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
        await app.worker(stop=stop, **overrides)

    asyncio.run(main())
    # Abandoned sync handlers run in daemon threads: they do not hold up the exit.


USAGE = "usage: taskboard {migrate,worker,enqueue,status,demo} ..."


def main() -> int:
    """Print the usage and exit 2: the commands are not implemented yet."""
    print(USAGE, file=sys.stderr)
    sys.exit(2)
