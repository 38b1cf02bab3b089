"""A producer for the failover tests: run it as a subprocess.

    TASKBOARD_DATABASE_URL=... PRODUCER_ACKS=/tmp/acks PRODUCER_STOP=/tmp/stop \
        python tests/apps/failover_producer.py

Enqueues job after job of task "work" (payload {"n": N, "sleep": SLEEP},
dedupe_key "n-N": each handler holds its job for a moment)
with `app.enqueue` on the app's own pool, until the file PRODUCER_STOP
exists. Each acknowledged enqueue appends one fsynced JSON line to
PRODUCER_ACKS: {"n", "id", "at"} (`at` is time.time()). An enqueue that
raises is logged in one line and made again with the same dedupe_key, which
returns the job if the failed one committed after all.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

from taskboard import Taskboard
from taskboard_dev.harness import Journal

PAUSE_SECONDS = 0.1  # between two enqueues
HANDLER_SLEEP_SECONDS = 0.2  # each job's handler sleeps this long: jobs are held at the failover
RETRY_SECONDS = 0.2  # after a failed one

log = logging.getLogger("failover_producer")


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    acks = Journal(Path(os.environ["PRODUCER_ACKS"]))
    stop = Path(os.environ["PRODUCER_STOP"])
    app = Taskboard()
    n = 0
    while not stop.exists():
        try:
            job_id = app.enqueue(
                "work", {"n": n, "sleep": HANDLER_SLEEP_SECONDS}, dedupe_key=f"n-{n}"
            )
        except Exception as exc:  # noqa: BLE001 - every failure is logged and retried
            why = (str(exc).strip().splitlines() or [""])[0]
            log.warning("enqueue %d failed: %s: %s", n, type(exc).__name__, why)
            time.sleep(RETRY_SECONDS)
            continue
        acks.write({"n": n, "id": job_id, "at": time.time()})
        n += 1
        time.sleep(PAUSE_SECONDS)
    app.close()
    log.info("producer stopped after %d jobs", n)


if __name__ == "__main__":
    main()
