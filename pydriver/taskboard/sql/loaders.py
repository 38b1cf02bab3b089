"""How the reads for people (the command, the exporter, the dashboard) decode rows.

json, jsonb and timestamptz as psycopg decodes them by default, whatever the
caller's connection registered, except that a time Python's datetime cannot
hold (before the year 1, after 9999, infinity) becomes an UnreadableTime
instead of failing the whole read: one such row must not hide every other
one. The worker's own calls keep psycopg's loaders.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.json import JsonbLoader, JsonLoader


class UnreadableTime(dt.datetime):
    """A timestamptz Python's datetime cannot hold, e.g. '0044-03-15 00:00:00+00 BC'.

    It orders and subtracts as the nearest time a datetime holds
    (datetime.min or datetime.max, in UTC), and `isoformat()` and `str()`
    give `text`, what PostgreSQL printed.
    """

    text: str = ""

    @classmethod
    def of(cls, text: str) -> UnreadableTime:
        """The value for PostgreSQL's `text` of a time out of datetime's range."""
        early = text.endswith(" BC") or text.startswith("-")  # BC, or -infinity
        bound = dt.datetime.min if early else dt.datetime.max
        made = cls.combine(bound.date(), bound.time(), dt.UTC)
        made.text = text
        return made

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return self.text or super().isoformat(sep, timespec)

    def __str__(self) -> str:
        return self.text or super().__str__()

    def __repr__(self) -> str:
        return f"UnreadableTime.of({self.text!r})"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (UnreadableTime.of, (self.text,)) if self.text else super().__reduce_ex__(protocol)


class ReadableTimestamptzLoader(TimestamptzLoader):
    """psycopg's timestamptz loader, giving an UnreadableTime where it would fail."""

    def load(self, data: Buffer) -> dt.datetime:
        try:
            return super().load(data)
        except psycopg.DataError:
            return UnreadableTime.of(bytes(data).decode("utf-8", "replace"))


READABLE_LOADERS: tuple[tuple[str, type[Loader]], ...] = (
    ("json", JsonLoader),
    ("jsonb", JsonbLoader),
    ("timestamptz", ReadableTimestamptzLoader),
)


def readable(cur: psycopg.Cursor[Any] | psycopg.AsyncCursor[Any]) -> None:
    """Decode json, jsonb and timestamptz on `cur` with READABLE_LOADERS (Django, say,
    registers jsonb as text and, without USE_TZ, timestamptz as naive datetimes)."""
    for name, loader in READABLE_LOADERS:
        cur.adapters.register_loader(name, loader)
