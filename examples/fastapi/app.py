"""A FastAPI service that enqueues in each request's transaction and runs a worker.

Run it with `uvicorn app:api` (TASKBOARD_DATABASE_URL names the database).
POST /signups stores a signup and enqueues its welcome mail in one
transaction; the worker started in the lifespan sends it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException
from psycopg import AsyncConnection, errors
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel
from uvicorn.logging import DefaultFormatter

from taskboard import AsyncContext, Taskboard

# uvicorn sets up its own loggers only: show Taskboard's records (logger
# "taskboard") in the same format, on stderr.
handler = logging.StreamHandler()
handler.setFormatter(DefaultFormatter("%(levelprefix)s %(name)s: %(message)s"))
logging.getLogger("taskboard").addHandler(handler)
logging.getLogger("taskboard").setLevel(logging.INFO)

log = logging.getLogger("uvicorn.error")  # uvicorn's own logger for the app's lines
taskboard = Taskboard()  # settings from TASKBOARD_* variables
pool = AsyncConnectionPool(taskboard.settings.database_url, open=False)


@taskboard.task("send_welcome")
async def send_welcome(ctx: AsyncContext, payload: dict[str, Any]) -> None:
    await asyncio.sleep(payload.get("seconds", 0))  # stands in for the mail service
    log.info("welcome mail sent to %s", payload["email"])


@asynccontextmanager
async def lifespan(api: FastAPI) -> AsyncIterator[None]:
    await pool.open()
    stop = asyncio.Event()
    worker = asyncio.create_task(taskboard.worker(stop=stop))
    yield
    stop.set()  # stop claiming; running handlers finish, the rest are handed back
    await worker
    await taskboard.aclose()
    await pool.close()


api = FastAPI(lifespan=lifespan)


async def transaction() -> AsyncIterator[AsyncConnection[Any]]:
    """A connection in a transaction for one request: committed when the
    endpoint returns, rolled back when it raises."""
    async with pool.connection() as conn, conn.transaction():
        yield conn


# scope="function": commit before the response is sent, so a failed commit is a 500.
Transaction = Annotated[AsyncConnection[Any], Depends(transaction, scope="function")]


class Signup(BaseModel):
    email: str
    seconds: float = 0


@api.post("/signups")
async def create_signup(signup: Signup, conn: Transaction) -> dict[str, int]:
    try:
        cur = await conn.execute(
            "INSERT INTO signups (email) VALUES (%s) RETURNING id", [signup.email]
        )
    except errors.UniqueViolation:
        raise HTTPException(409, "already signed up") from None
    row = await cur.fetchone()
    assert row is not None
    job_id = await send_welcome.aenqueue(signup.model_dump(), conn=conn)
    return {"signup": row[0], "job": job_id}
