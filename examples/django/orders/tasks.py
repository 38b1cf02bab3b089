"""The project's Taskboard app, on the database of Django's DATABASES["default"]."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection
from psycopg.conninfo import make_conninfo

from orders.models import Order
from taskboard import SyncContext, Taskboard, load_settings

log = logging.getLogger(__name__)


def database_url(database: dict[str, Any]) -> str:
    """A psycopg connection string for one entry of DATABASES."""
    return make_conninfo(
        dbname=database["NAME"],
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        host=database.get("HOST") or None,
        port=database.get("PORT") or None,
    )


# The other settings come from TASKBOARD_* variables, as for `taskboard worker`.
taskboard = Taskboard(load_settings(database_url=database_url(settings.DATABASES["default"])))


def psycopg_connection() -> psycopg.Connection[Any]:
    """The psycopg connection under Django's: pass it as conn= inside atomic()."""
    connection.ensure_connection()
    return connection.connection


@taskboard.task("send_receipt")
def send_receipt(ctx: SyncContext, payload: dict[str, Any]) -> None:
    try:
        order = Order.objects.get(pk=payload["order_id"])
        log.info("receipt for order %s (%s) sent", order.pk, order.item)
    finally:
        connection.close()  # the Django connection of the handler's own thread
