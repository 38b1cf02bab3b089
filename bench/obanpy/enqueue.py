"""python enqueue.py URL < [[start, stop], ...]: W1's enqueue with Oban's batch API,
enqueue_many(), one call per [start, stop) range of seqs, on one connection. Prints the
seconds the calls took (connecting not counted) as JSON on stdout."""

from __future__ import annotations

import json
import sys
import time

from common import new_job, pool, run
from oban import Oban


async def main(url: str, batches: list[list[int]]) -> float:
    p = await pool(url, 1)
    try:
        oban = Oban(pool=p)  # no queues: a client that only enqueues
        started = time.perf_counter()
        for start, stop in batches:
            await oban.enqueue_many([new_job(seq) for seq in range(start, stop)])
        return time.perf_counter() - started
    finally:
        await p.close()


seconds = run(main(sys.argv[1], json.loads(sys.stdin.read())))
print(json.dumps({"seconds": seconds}), flush=True)
