"""A soak producer process: sends its share of the plan's enqueue_many calls on time.

    python -m soak.producer --url URL --plan FILE --index I --start EPOCH --history FILE

A batch that carries dedupe keys is sent by every producer at the same
moment, so the same keys race each other. Each call is recorded (fsynced)
with its send and answer times and the ids it returned. A call whose
connection broke has an unknown outcome (it may have committed): it is
recorded as `enqueue_error` and sent again; the check counts jobs that an
unknown outcome doubled rather than calling them lost or invented. A batch of
the keyed queue carries its jobs' concurrency keys (`concurrency_keys`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import psycopg

from soak.history import History
from soak.plan import Plan
from taskboard.app import Taskboard
from taskboard.settings import load_settings

RETRY_S = 0.25
GIVE_UP_S = 120.0  # a batch that cannot be sent for this long is given up (and reported)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m soak.producer")
    parser.add_argument("--url", required=True)
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--index", required=True, type=int)
    parser.add_argument("--start", required=True, type=float)
    parser.add_argument("--history", required=True, type=Path)
    args = parser.parse_args(argv)

    plan = Plan.load(args.plan)
    name = f"producer-{args.index}"
    history = History(args.history, process=name)
    app = Taskboard(load_settings(database_url=args.url))
    mine = [b for b in plan.batches if args.index in b.producers]
    for batch in mine:
        wait = args.start + batch.at - time.time()
        if wait > 0:
            time.sleep(wait)
        payloads = [
            {**p, "rid": f"{batch.index}.{i}.{args.index}"} for i, p in enumerate(batch.payloads)
        ]
        rids = [p["rid"] for p in payloads]
        given_up_at = time.monotonic() + GIVE_UP_S
        while True:
            sent = time.time()
            run_at = None
            if batch.delay is not None:
                run_at = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=batch.delay)
            try:
                ids = app.enqueue_many(
                    batch.task,
                    payloads,
                    queue=batch.queue,
                    run_at=run_at,
                    priority=batch.priority,
                    max_attempts=batch.max_attempts,
                    dedupe_keys=batch.keys,
                    concurrency_keys=batch.concurrency_keys,
                )
            except psycopg.OperationalError as exc:
                history.write(
                    "enqueue_error",
                    sent=sent,
                    batch=batch.index,
                    rids=rids,
                    error=f"{type(exc).__name__}: {exc}"[:200],
                )
                if time.monotonic() > given_up_at:
                    history.write("enqueue_given_up", batch=batch.index, rids=rids)
                    break
                time.sleep(RETRY_S)
                continue
            history.write(
                "enqueue",
                sent=sent,
                batch=batch.index,
                queue=batch.queue,
                task=batch.task,
                rids=rids,
                keys=batch.keys,
                concurrency_keys=batch.concurrency_keys,
                ids=ids,
            )
            break
    history.write("producer_done", batches=len(mine))
    app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
