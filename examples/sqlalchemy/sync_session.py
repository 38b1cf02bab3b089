"""Enqueue a job in an SQLAlchemy 2 Session's transaction: `python sync_session.py`."""

from __future__ import annotations

from typing import Any

import psycopg
from models import Base, Order, database_url, send_receipt
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session


def psycopg_connection(session: Session) -> psycopg.Connection[Any]:
    """The psycopg connection of the session's transaction (begun if not yet)."""
    return session.connection().connection.driver_connection


def place_order(session: Session, item: str) -> int:
    order = Order(item=item)
    session.add(order)
    session.flush()  # the INSERT, so the order has its id
    send_receipt.enqueue({"order_id": order.id}, conn=psycopg_connection(session))
    return order.id


def main() -> None:
    engine = create_engine(database_url())
    Base.metadata.create_all(engine)
    with Session(engine) as session, session.begin():  # commits: the order and its job
        kept = place_order(session, "teapot")
    try:
        with Session(engine) as session, session.begin():  # rolls back: neither
            place_order(session, "kettle")
            raise RuntimeError("payment declined")
    except RuntimeError:
        pass
    with Session(engine) as session:
        print("orders:", session.scalars(select(Order.id)).all(), "kept:", kept)


if __name__ == "__main__":
    main()
