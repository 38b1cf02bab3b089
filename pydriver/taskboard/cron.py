"""Cron expressions of periodic jobs, parsed by cronsim and evaluated in UTC.

Five fields (minute, hour, day of month, month, day of week), or six with
seconds first (``*/10 * * * * *``: every ten seconds). The times a
schedule fires are computed from times the database's clock gave, never
from this machine's clock.
"""

from __future__ import annotations

import datetime as dt

from cronsim import CronSim, CronSimError

# cronsim starts a backward search at the second before its start time when
# that time has no fraction of a second: a time a microsecond later makes
# the search include the start time itself.
ONE_MICROSECOND = dt.timedelta(microseconds=1)


class CronError(ValueError):
    """A cron expression that cannot be used; the message says why."""


class Cron:
    """A parsed cron expression, evaluated in UTC.

    Raises CronError for an expression cronsim refuses, and for one that
    never fires in the fifty years after `checked_at` (now by default).
    """

    def __init__(self, expression: str, *, checked_at: dt.datetime | None = None) -> None:
        if not isinstance(expression, str):
            raise CronError(f"must be a string, got {expression!r}")
        self.expression = expression
        start = checked_at or dt.datetime.now(dt.UTC)
        try:
            first = self.after(start)
        except CronSimError as exc:
            raise CronError(str(exc)) from None
        if first is None:
            raise CronError("it never fires")

    def __repr__(self) -> str:
        return f"Cron({self.expression!r})"

    def latest(self, at: dt.datetime) -> dt.datetime | None:
        """The latest time it fires at or before `at` (aware), in UTC; None if none in 50 years."""
        start = at.astimezone(dt.UTC) + ONE_MICROSECOND
        return next(CronSim(self.expression, start, reverse=True), None)

    def after(self, at: dt.datetime) -> dt.datetime | None:
        """The first time it fires after `at` (aware), in UTC; None if none in 50 years."""
        return next(CronSim(self.expression, at.astimezone(dt.UTC)), None)
