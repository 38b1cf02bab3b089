"""python install.py URL: create Oban's tables, types and indexes (oban.schema.install)."""

from __future__ import annotations

import sys

from common import pool, run
from oban.schema import install


async def main(url: str) -> None:
    p = await pool(url, 1)
    try:
        await install(p)
    finally:
        await p.close()


run(main(sys.argv[1]))
