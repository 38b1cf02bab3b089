"""python producer.py URL: W2's producer. Prints READY once connected, then for every seq
read on stdin enqueues one job with enqueue() (its own statement, its own commit) and
answers "<seq> <call start> <commit returned>" once the commit returned: wall-clock
seconds (time.time()) read here, so the pipe is not measured."""

from __future__ import annotations

import asyncio
import sys
import time

from common import new_job, pool, run
from oban import Oban


async def main(url: str) -> None:
    p = await pool(url, 1)
    try:
        oban = Oban(pool=p)
        loop = asyncio.get_running_loop()
        print("READY", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            seq = int(line)
            started = time.time()
            await oban.enqueue(new_job(seq))
            committed = time.time()
            print(f"{seq} {started:.6f} {committed:.6f}", flush=True)
    finally:
        await p.close()


run(main(sys.argv[1]))
