"""A soak producer process: sends its share of the plan's enqueue_many calls on time.

    python -m soak.producer --url URL --plan FILE --index I --start EPOCH --history FILE

A batch that carries dedupe keys is sent by every producer at the same
moment, so the same keys race each other. Each call is recorded (fsynced)
with its send and answer times and the ids it returned. A call whose
connection broke has an unknown outcome (it may have committed): it is
recorded as `enqueue_error` and sent again; the check counts jobs that an
unknown outcome doubled rather than calling them lost or invented.

A batch whose jobs carry concurrency keys (customer.sync, in the queue with a
key limit) is sent as a call of `taskboard.enqueue_many` with its
`concurrency_keys` array, on a connection of the producer's own.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from soak.history import History
from soak.plan import Batch, Plan
from taskboard.app import Taskboard
from taskboard.settings import load_settings

RETRY_S = 0.25
GIVE_UP_S = 120.0  # a batch that cannot be sent for this long is given up (and reported)
CONNECT_TIMEOUT_S = 5
KEYED_ENQUEUE_SQL = """
SELECT taskboard.enqueue_many(
           task => %(task)s, payloads => %(payloads)s::jsonb[], queue => %(queue)s,
           run_at => %(run_at)s, priority => %(priority)s, max_attempts => %(max_attempts)s,
           dedupe_keys => %(dedupe_keys)s::text[], concurrency_keys => %(concurrency_keys)s::text[])
"""


class KeyedEnqueuer:
    """enqueue_many with concurrency keys, on an autocommit connection opened again
    after it broke."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: psycopg.Connection[Any] | None = None

    def enqueue_many(
        self, batch: Batch, payloads: list[dict[str, Any]], run_at: dt.datetime | None
    ) -> list[int]:
        if self.conn is None or self.conn.closed or self.conn.broken:
            self.conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
        rows = self.conn.execute(
            KEYED_ENQUEUE_SQL,
            {
                "task": batch.task,
                "payloads": [Jsonb(p) for p in payloads],
                "queue": batch.queue,
                "run_at": run_at,
                "priority": batch.priority,
                "max_attempts": batch.max_attempts,
                "dedupe_keys": batch.keys,
                "concurrency_keys": batch.concurrency_keys,
            },
        ).fetchall()
        return [int(r[0]) for r in rows]

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


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
    keyed = KeyedEnqueuer(args.url)
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
                if batch.concurrency_keys is not None:
                    ids = keyed.enqueue_many(batch, payloads, run_at)
                else:
                    ids = app.enqueue_many(
                        batch.task,
                        payloads,
                        queue=batch.queue,
                        run_at=run_at,
                        priority=batch.priority,
                        max_attempts=batch.max_attempts,
                        dedupe_keys=batch.keys,
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
    keyed.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
