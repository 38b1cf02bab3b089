"""`manage.py taskboard_worker`: run a worker for the project's tasks until SIGTERM or SIGINT."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from orders.tasks import taskboard


class Command(BaseCommand):
    help = "Run a Taskboard worker until SIGTERM or SIGINT (then shut down gracefully)."

    def handle(self, *args: Any, **options: Any) -> None:
        taskboard.run_worker()
