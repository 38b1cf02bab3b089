"""The overview's key limit and rate limit of each queue, with the starts in the rate
limit's window, as queue_overview gives them from schema 0.4.9 on; before it the page
leaves them out and says from which release they show."""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import re
from typing import Any

import psycopg
import pytest

from taskboard.sql import dashboard as sql_dashboard
from taskboard.web import server
from tests.support.database import connect
from tests.support.web import client

LIMIT_COLUMNS = ("max_running_per_key", "rate_starts", "rate_per", "rate_by_key", "window_starts")


def enqueue(url: str, queue: str, keys: list[str | None]) -> None:
    """One job of `queue` for each of `keys` (None: a job without a key), as the producer."""
    with connect(url, "taskboard_producer") as conn:
        for key in keys:
            conn.execute(
                "SELECT taskboard.enqueue('send', '{}', %s, concurrency_key => %s)", [queue, key]
            )


def claim(url: str, queue: str, batch: int) -> int:
    """How many jobs of `queue` one claim of up to `batch` started, as a worker."""
    with connect(url, "taskboard_worker") as conn:
        return len(
            conn.execute("SELECT * FROM taskboard.claim(%s, 'w', %s)", [queue, batch]).fetchall()
        )


def admin(url: str, query: str, params: list[Any]) -> None:
    with connect(url, "taskboard_admin") as conn:
        conn.execute(query, params)


def row_of(page: str, queue: str) -> str:
    found = re.search(rf'<tr data-queue="{re.escape(queue)}">(.*?)</tr>', page, re.S)
    assert found, f"queue {queue} is not listed"
    return found.group(1)


def cell(page: str, queue: str, name: str) -> str:
    """The text of the queue's cell of class `name`, as a person reads it."""
    found = re.search(rf'<td class="num {name}[^"]*"[^>]*>(.*?)</td>', row_of(page, queue), re.S)
    assert found, f"queue {queue} has no {name} cell"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


def at_limit(page: str, queue: str) -> bool:
    found = re.search(r'<td class="num rate-limit([^"]*)"', row_of(page, queue))
    assert found, f"queue {queue} has no rate-limit cell"
    return "at-limit" in found.group(1).split()


def test_the_overview_shows_each_queues_key_and_rate_limit_and_its_window(
    deployed: str, admin_url: str
) -> None:
    enqueue(deployed, "plain", [None])
    enqueue(deployed, "rated", ["x", "x", "x", "y", "z"])
    enqueue(deployed, "keyed", ["a", "a", "a", "b", None])
    admin(deployed, "SELECT taskboard.set_key_limit('rated', 2)", [])
    admin(deployed, "SELECT taskboard.set_rate_limit('rated', 3, interval '90 seconds')", [])
    admin(deployed, "SELECT taskboard.set_rate_limit('keyed', 2, interval '1 hour', true)", [])
    with client(admin_url) as tb:
        before = tb.get("/").text
        assert '<th class="num">Key limit</th>' in before
        assert '<th class="num">Rate limit</th>' in before
        assert 'id="limits-unknown"' not in before
        assert (cell(before, "plain", "key-limit"), cell(before, "plain", "rate-limit")) == (
            "none",
            "none",
        )
        assert cell(before, "rated", "key-limit") == "2"
        assert cell(before, "rated", "rate-limit") == "0 of 3 per 1m 30s"
        assert cell(before, "keyed", "key-limit") == "none"
        assert cell(before, "keyed", "rate-limit") == "0 of 2 per 1h per key"
        assert not at_limit(before, "rated") and not at_limit(before, "keyed")

        # Three of rated's five start (two of x, its key limit, then y and z: the
        # rate limit stops the third); keyed's a starts two, b and the job without
        # a key one each.
        assert claim(deployed, "rated", 10) == 3
        assert claim(deployed, "keyed", 10) == 4
        after = tb.get("/").text
    assert cell(after, "rated", "rate-limit") == "3 of 3 per 1m 30s"
    assert at_limit(after, "rated")
    assert 'title="3 jobs started in the last 1m 30s; claim starts at most 3 in any 1m 30s"' in (
        row_of(after, "rated")
    )
    # Per key: the busiest key's starts (a's two), not the queue's four.
    assert cell(after, "keyed", "rate-limit") == "2 of 2 per 1h per key"
    assert at_limit(after, "keyed")
    assert "the busiest concurrency key started 2 jobs in the last 1h" in row_of(after, "keyed")
    # The two held back stay queued (the first count of the row), not failed.
    assert re.findall(r'<td class="num">(\d+)</td>', row_of(after, "rated"))[0] == "2"


def test_a_rate_limit_removed_shows_as_none(deployed: str, admin_url: str) -> None:
    enqueue(deployed, "rated", [None])
    admin(deployed, "SELECT taskboard.set_rate_limit('rated', 1, interval '1 day')", [])
    assert claim(deployed, "rated", 1) == 1
    with client(admin_url) as tb:
        assert cell(tb.get("/").text, "rated", "rate-limit") == "1 of 1 per 1d"
        admin(deployed, "SELECT taskboard.set_rate_limit('rated', NULL, NULL)", [])
        assert cell(tb.get("/").text, "rated", "rate-limit") == "none"


def overview_rows(url: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            return await sql_dashboard.aqueue_overview(conn, dt.timedelta(hours=1))

    return asyncio.run(read())


def test_the_rows_carry_each_queues_rate_limit(deployed: str, admin_url: str) -> None:
    enqueue(deployed, "rated", [None])
    admin(deployed, "SELECT taskboard.set_rate_limit('rated', 5, interval '1 minute')", [])
    (now,) = overview_rows(admin_url)
    assert set(LIMIT_COLUMNS) <= set(now)
    assert (now["rate_starts"], now["rate_per"], now["rate_by_key"], now["window_starts"]) == (
        5,
        dt.timedelta(minutes=1),
        False,
        0,
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (dt.timedelta(seconds=1), "1s"),
        (dt.timedelta(seconds=90), "1m 30s"),
        (dt.timedelta(hours=1), "1h"),
        (dt.timedelta(days=1, hours=12), "1d 12h"),
        (dt.timedelta(days=31), "31d"),
        (dt.timedelta(milliseconds=500), "0.5s"),
        (dt.timedelta(minutes=1, microseconds=250), "1m 0.00025s"),
        (dt.timedelta(0), "0s"),
        (None, ""),
    ],
)
def test_a_span_is_short_and_exact(value: dt.timedelta | None, shown: str) -> None:
    assert server.span(value) == shown
