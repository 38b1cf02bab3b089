from __future__ import annotations

from django.db import transaction

from orders.models import Order
from orders.tasks import psycopg_connection, send_receipt


def place_order(item: str) -> Order:
    """Store an order and enqueue its receipt: both commit, or neither."""
    with transaction.atomic():
        order = Order.objects.create(item=item)
        send_receipt.enqueue({"order_id": order.pk}, conn=psycopg_connection())
    return order
