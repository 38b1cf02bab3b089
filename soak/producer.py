"""A soak producer process: sends its share of the plan's enqueue_many calls on time.

    python -m soak.producer --url URL --plan FILE --index I --start EPOCH --history FILE

A batch that carries dedupe keys is sent by every producer at the same
moment, so the same keys race each other. Each call is recorded (fsynced)
with its send and answer times and the ids it returned. A call whose
connection broke has an unknown outcome (it may have committed): it is
recorded as `enqueue_error` and sent again; the check counts jobs that an
unknown outcome doubled rather than calling them lost or invented. A batch of
the keyed queue carries its jobs' concurrency keys (`concurrency_keys`). A
graph's jobs are enqueued together in one transaction (`app.group()`), each
child with `depends_on` its parents' ids; its record adds `graph`: each
dependent's id, its dependencies' ids and its on_dependency_failure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from soak.history import History
from soak.plan import Batch, Plan
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
                if batch.graph is not None:
                    ids = enqueue_graph(app, batch, payloads)
                else:
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
                **({} if batch.graph is None else {"graph": graph_edges(batch, ids)}),
            )
            break
    history.write("producer_done", batches=len(mine))
    app.close()
    return 0


def enqueue_graph(app: Taskboard, batch: Batch, payloads: list[dict[str, Any]]) -> list[int]:
    """Enqueue a graph's jobs in one transaction (app.group()), each with the ids of the
    earlier jobs it depends on; the ids in the batch's order. Nothing of it commits when
    a call fails; a broken connection leaves the outcome unknown, as for enqueue_many."""
    assert batch.graph is not None
    ids: list[int] = []
    with app.group() as g:
        for node, payload in zip(batch.graph, payloads, strict=True):
            after = [ids[i] for i in node["after"]]
            ids.append(
                g.enqueue(
                    node["task"],
                    payload,
                    queue=node["queue"],
                    priority=batch.priority,
                    max_attempts=node["max_attempts"],
                    concurrency_key=node["concurrency_key"],
                    depends_on=after or None,
                    on_dependency_failure=node["on_failure"] or "cancel",
                )
            )
    return ids


def graph_edges(batch: Batch, ids: list[int]) -> list[dict[str, Any]]:
    """What the history keeps of a graph the database committed: per job with
    dependencies, its id, theirs and its on_dependency_failure."""
    assert batch.graph is not None
    return [
        {"job": ids[n], "depends_on": [ids[i] for i in node["after"]], "mode": node["on_failure"]}
        for n, node in enumerate(batch.graph)
        if node["after"]
    ]


if __name__ == "__main__":
    sys.exit(main())
