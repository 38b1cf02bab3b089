"""Enqueue a job in an SQLAlchemy 2 AsyncSession's transaction: `python async_session.py`."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from models import Base, Order, database_url, send_receipt
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine


async def psycopg_connection(session: AsyncSession) -> psycopg.AsyncConnection[Any]:
    """The psycopg connection of the session's transaction (begun if not yet)."""
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    return raw.driver_connection


async def place_order(session: AsyncSession, item: str) -> int:
    order = Order(item=item)
    session.add(order)
    await session.flush()  # the INSERT, so the order has its id
    await send_receipt.aenqueue({"order_id": order.id}, conn=await psycopg_connection(session))
    return order.id


async def main() -> None:
    engine = create_async_engine(database_url())
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.create_all)
    async with AsyncSession(engine) as session, session.begin():  # commits: the order and its job
        kept = await place_order(session, "teapot")
    try:
        async with AsyncSession(engine) as session, session.begin():  # rolls back: neither
            await place_order(session, "kettle")
            raise RuntimeError("payment declined")
    except RuntimeError:
        pass
    async with AsyncSession(engine) as session:
        print("orders:", (await session.scalars(select(Order.id))).all(), "kept:", kept)
    await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
