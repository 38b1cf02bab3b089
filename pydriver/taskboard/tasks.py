"""Registered tasks: a handler, its queue, and how to run it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskboard.retries import RetryPolicy

DEFAULT_QUEUE = "default"
DEFAULT_MAX_ATTEMPTS = 5

Handler = Callable[..., Any]


@dataclass(frozen=True)
class Task:
    """A registered handler and how to run it.

    `max_attempts` is what enqueue uses for the task's jobs when the caller
    gives none (None: DEFAULT_MAX_ATTEMPTS). `retry` gives the delay before
    the next attempt after the handler raised (None: the database's backoff).
    """

    name: str
    handler: Handler
    queue: str
    timeout: float | None
    transactional: bool
    max_attempts: int | None = None
    retry: RetryPolicy | None = None

    @functools.cached_property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.handler)


def worker_queues(tasks: Mapping[str, Task], configured: Sequence[str]) -> list[str]:
    """The queues a worker claims from: `configured`, else every task's queue, else default."""
    if configured:
        return list(dict.fromkeys(configured))
    return sorted({t.queue for t in tasks.values()}) or [DEFAULT_QUEUE]
