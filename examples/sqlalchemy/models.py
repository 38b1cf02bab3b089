"""The example's tables and its Taskboard app, shared by the sync and async scripts."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import URL, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from taskboard import SyncContext, Taskboard

taskboard = Taskboard()  # settings from TASKBOARD_* variables


@taskboard.task("send_receipt")
def send_receipt(ctx: SyncContext, payload: dict[str, Any]) -> None:
    print(f"receipt for order {payload['order_id']} sent")


def database_url() -> URL:
    """TASKBOARD_DATABASE_URL on SQLAlchemy's psycopg 3 dialect (sync and async)."""
    return make_url(os.environ["TASKBOARD_DATABASE_URL"]).set(drivername="postgresql+psycopg")


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(primary_key=True)
    item: Mapped[str]
