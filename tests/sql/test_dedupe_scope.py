"""Dedupe keys scoped to (queue, task, key): the upgrade from v0.1.0, the revert to it, and collisions.

The behaviour on a fresh deploy is pgTAP (db/tests/10-enqueue.sql,
11-enqueue_many.sql). Here: a v0.1.0 database keeps its unfinished keyed
jobs through `sqitch deploy` and back; the revert refuses, changing
nothing, while jobs of two tasks share a (queue, key) that v0.1.0's index
allows once; and a key whose hash collides with another's raises instead of
answering with the other key's job. No SHA-256 collision is known, so that
test swaps the hash for a weak one in a throwaway database.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import install
from tests.support.database import MakeDatabase, Sqitch, connect, value

DB = Path(__file__).resolve().parents[2] / "db"

ENQUEUE = "SELECT taskboard.enqueue(task => %s, queue => %s, dedupe_key => %s)"
ENQUEUE_MANY = (
    "SELECT array_agg(u.id ORDER BY u.ord) FROM taskboard.enqueue_many("
    " task => %(task)s, payloads => array_fill('{}'::jsonb, ARRAY[cardinality(%(keys)s::text[])]),"
    " queue => %(queue)s, dedupe_keys => %(keys)s::text[]) WITH ORDINALITY AS u(id, ord)"
)


def enqueue_many(conn: psycopg.Connection[Any], task: str, queue: str, keys: list[str]) -> Any:
    """enqueue_many of one empty payload per key: the ids, in key order."""
    row = conn.execute(ENQUEUE_MANY, {"task": task, "queue": queue, "keys": keys}).fetchone()
    assert row is not None
    return row[0]


def deployed_changes(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT change FROM sqitch.changes ORDER BY committed_at").fetchall()
    return [r[0] for r in rows]


def dedupe_indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexrelid::regclass::text FROM pg_index"
            " WHERE indrelid = 'taskboard.jobs'::regclass AND indisunique AND NOT indisprimary"
        ).fetchall()
    return {r[0] for r in rows}


def v0_1_0_database(make_database: MakeDatabase, sqitch: Sqitch) -> str:
    url = make_database(release="0.1.0")
    return url


def upgrade(url: str, sqitch: Sqitch) -> None:
    """To release 0.2.0, which scoped the keys (later changes revert before it)."""
    upgraded = sqitch(url, "deploy", "--verify", "--to", "@v0.2.0")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert dedupe_indexes(url) == {"taskboard.jobs_unfinished_task_dedupe_key"}


def test_a_v0_1_0_keyed_job_keeps_its_key_through_the_upgrade_and_the_revert(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = v0_1_0_database(make_database, sqitch)
    with connect(url, "taskboard_producer") as producer:
        queued = value(producer, ENQUEUE, ["charge", "pay", "order-1"])
        assert value(producer, ENQUEUE, ["charge", "pay", "order-1"]) == queued
        running = value(producer, ENQUEUE, ["charge", "ship", "order-2"])
    with connect(url, "taskboard_worker") as worker:
        claimed = value(worker, "SELECT job_id FROM taskboard.claim('ship', 'w')")
        assert claimed == running

    upgrade(url, sqitch)
    with connect(url, "taskboard_producer") as producer:
        assert value(producer, ENQUEUE, ["charge", "pay", "order-1"]) == queued
        assert value(producer, ENQUEUE, ["charge", "ship", "order-2"]) == running
        assert enqueue_many(producer, "charge", "pay", ["order-1"]) == [queued]
        # One task per key: nothing for the revert to refuse.
        other = value(producer, ENQUEUE, ["charge", "pay", "order-3"])

    reverted = sqitch(url, "revert", "-y", "--to", "@v0.1.0")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    verified = sqitch(url, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert dedupe_indexes(url) == {"taskboard.jobs_unfinished_dedupe_key"}
    with connect(url, "taskboard_producer") as producer:
        # v0.1.0 again: the key is the queue's, whatever the task.
        assert value(producer, ENQUEUE, ["refund", "pay", "order-1"]) == queued
        assert value(producer, ENQUEUE, ["charge", "ship", "order-2"]) == running
        assert value(producer, ENQUEUE, ["charge", "pay", "order-3"]) == other


def test_the_revert_is_refused_naming_the_pairs_while_two_tasks_share_a_key(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = v0_1_0_database(make_database, sqitch)
    with connect(url, "taskboard_producer") as producer:
        charge = value(producer, ENQUEUE, ["charge", "pay", "order-1"])
    upgrade(url, sqitch)
    with connect(url, "taskboard_producer") as producer:
        refund = value(producer, ENQUEUE, ["refund", "pay", "order-1"])
        assert refund != charge
        value(producer, ENQUEUE, ["refund", "pay", "order-2"])  # one task only: no conflict
        [late] = enqueue_many(producer, "late", "pay", ["order-1"])
    changes = deployed_changes(url)
    assert changes[-1] == "dedupe_scope"

    refused = sqitch(url, "revert", "-y", "--to", "@v0.1.0")
    assert refused.returncode != 0, refused.stdout
    errors = [line for line in refused.stderr.splitlines() if "ERROR:" in line]
    assert len(errors) == 1, refused.stderr
    assert errors[0].endswith(
        "ERROR:  cannot revert dedupe_scope: v0.1.0 allows one unfinished job per"
        " (queue, dedupe_key), and 1 such pair(s) are held by unfinished jobs of more"
        " than one task: ('pay', 'order-1')"
    ), refused.stderr

    # Nothing was undone: still the new release, scope and all.
    assert deployed_changes(url) == changes
    verified = sqitch(url, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert dedupe_indexes(url) == {"taskboard.jobs_unfinished_task_dedupe_key"}
    with connect(url, "taskboard_producer") as producer:
        assert value(producer, ENQUEUE, ["charge", "pay", "order-1"]) == charge
        assert value(producer, ENQUEUE, ["refund", "pay", "order-1"]) == refund

    # Once one job of each pair is finished, the revert goes through.
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [refund]) is True
        assert value(admin, "SELECT taskboard.cancel(%s)", [late]) is True
    reverted = sqitch(url, "revert", "-y", "--to", "@v0.1.0")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert dedupe_indexes(url) == {"taskboard.jobs_unfinished_dedupe_key"}
    with connect(url, "taskboard_producer") as producer:
        assert value(producer, ENQUEUE, ["refund", "pay", "order-1"]) == charge


# Stands in for sha256 in the collision test: keys with the same first byte collide.
FIRST_BYTE = """
CREATE FUNCTION taskboard.first_byte(bytea) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT
    RETURN pg_catalog.substr($1, 1, 1)
"""
SHA256 = "pg_catalog.sha256("


def with_weak_hash(url: str) -> None:
    """Make the dedupe index and enqueue, enqueue_many hash keys by their first byte."""
    with psycopg.connect(url, autocommit=False) as conn:
        conn.execute(FIRST_BYTE)
        deploy = (DB / "deploy" / "dedupe_scope.sql").read_text()
        index = re.search(r"^CREATE UNIQUE INDEX .*?;\n", deploy, re.MULTILINE | re.DOTALL)
        assert index is not None and SHA256 in index[0]
        conn.execute("DROP INDEX taskboard.jobs_unfinished_task_dedupe_key")
        conn.execute(index[0].replace(SHA256, "taskboard.first_byte("))
        for name in ("enqueue", "enqueue_many"):
            text = install.render((DB / "functions" / f"{name}.sql").read_text(), "taskboard")
            assert text.count(SHA256) >= 2, name
            conn.execute(text.replace(SHA256, "taskboard.first_byte("))


def test_a_key_whose_hash_collides_raises_instead_of_answering_with_the_other_keys_job(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with_weak_hash(url)
    with connect(url, "taskboard_producer") as producer:
        k1 = value(producer, ENQUEUE, ["t", "c", "k1"])
        assert value(producer, ENQUEUE, ["t", "c", "k1"]) == k1  # the same key still dedupes

        with pytest.raises(psycopg.errors.UniqueViolation) as raised:
            producer.execute(ENQUEUE, ["t", "c", "k2"])
        assert raised.value.diag.message_primary == (
            f"dedupe_key has the same SHA-256 as the different key of unfinished job {k1}"
            " of this queue and task"
        )

        with pytest.raises(psycopg.errors.UniqueViolation) as raised:
            enqueue_many(producer, "t", "c", ["new", "k2"])
        assert raised.value.diag.message_primary == (
            f"dedupe_keys element 2 (counting from 1) has the same SHA-256 as the different"
            f" key of unfinished job {k1} of this queue and task"
        )

        # Two colliding keys of one call: the second meets the first's new job.
        with pytest.raises(psycopg.errors.UniqueViolation):
            enqueue_many(producer, "t", "c", ["a1", "a2"])

        # Another task has a scope of its own.
        other = value(producer, ENQUEUE, ["u", "c", "k2"])
        assert other != k1

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT task, dedupe_key FROM taskboard.jobs WHERE queue = 'c' ORDER BY id"
        ).fetchall()
    assert rows == [("t", "k1"), ("u", "k2")], "a refused call wrote nothing"

    # Once k1's job is finished, k2 is free.
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [k1]) is True
    with connect(url, "taskboard_producer") as producer:
        assert value(producer, ENQUEUE, ["t", "c", "k2"]) not in (k1, other)
