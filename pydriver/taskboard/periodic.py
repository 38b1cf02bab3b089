"""Periodic jobs as the app declares them: a schedule's name, its cron, and the job of each slot."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskboard.cron import Cron, CronError
from taskboard.errors import InvalidArgument, TaskError
from taskboard.settings import name_problem
from taskboard.sql import parameters


@dataclass(frozen=True)
class Schedule:
    """A periodic job: at every slot of `cron`, one job of `task` (taskboard.enqueue_periodic).

    `name` identifies the schedule in the database (taskboard.schedules);
    `previous_names` are the names it had before a rename, whose slots it
    carries over. The job's arguments were checked when it was declared,
    the payload already encoded as JSON text.
    """

    name: str
    cron: Cron
    task: str
    queue: str
    payload_json: str
    priority: int
    max_attempts: int
    previous_names: tuple[str, ...] = ()

    def slot_conflict(self, task: str | None, queue: str | None, job_id: int | None) -> str | None:
        """None when a slot taken for `task` on `queue` (as taskboard.schedules keeps
        its latest; None: not known) is this schedule's, else the conflict in words."""
        if task is None or (task, queue) == (self.task, self.queue):
            return None
        job = "" if job_id is None else f" (job {job_id})"
        return (
            f"conflict: its latest slot{job} was taken for task {task} on queue {queue}, "
            f"not {self.task} on {self.queue}"
        )


def parse_cron(cron: str) -> Cron:
    """`cron` parsed; TaskError saying why when it cannot be used."""
    try:
        return Cron(cron)
    except CronError as exc:
        raise TaskError(f"periodic: cron {cron!r} is not valid: {exc}") from None


def schedule(
    *,
    name: str,
    cron: Cron,
    task: str,
    queue: str,
    payload: Any,
    priority: int,
    max_attempts: int,
    previous_names: Sequence[str] = (),
) -> Schedule:
    """A Schedule of checked arguments; TaskError naming the schedule and the argument else."""
    if isinstance(previous_names, str | bytes | Mapping) or not isinstance(
        previous_names, Iterable
    ):
        raise TaskError(
            f"periodic {name!r}: previous_names must be a list of names, got {previous_names!r}"
        )
    previous = tuple(dict.fromkeys(previous_names))
    problem = (
        name_problem(f"periodic {name!r}: name", name)
        or name_problem(f"periodic {name!r}: queue", queue)
        or next(
            (
                p
                for p in (name_problem(f"periodic {name!r}: previous_names", n) for n in previous)
                if p
            ),
            None,
        )
    )
    if problem:
        raise TaskError(problem)
    for what, text in [
        ("name", name),
        ("queue", queue),
        *(("previous_names", n) for n in previous),
    ]:
        if "\x00" in text:  # PostgreSQL's text cannot hold it: every slot would be refused
            raise TaskError(f"periodic {name!r}: {what} must not contain a NUL character")
    if name in previous:
        raise TaskError(f"periodic {name!r}: previous_names must not include its own name")
    try:
        payload_json = parameters.payload_json("payload", payload)
        parameters.int4("priority", priority)
        parameters.int4("max_attempts", max_attempts)
    except InvalidArgument as exc:
        raise TaskError(f"periodic {name!r}: {exc}") from None
    if max_attempts < 1:
        raise TaskError(f"periodic {name!r}: max_attempts must be at least 1, got {max_attempts}")
    return Schedule(name, cron, task, queue, payload_json, priority, max_attempts, previous)
