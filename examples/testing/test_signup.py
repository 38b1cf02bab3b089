"""Tests of signup.py with taskboard.testing: a real database per test, the real worker."""

from __future__ import annotations

import pytest
import signup

from taskboard.testing import assert_enqueued, enqueued_jobs, run_until_empty

# Every test here gets a freshly migrated database of its own (TASKBOARD_DATABASE_URL).
pytestmark = pytest.mark.usefixtures("taskboard_database")


def test_sign_up_enqueues_the_welcome_email() -> None:
    signup.sign_up("ada@example.com")

    job = assert_enqueued(task="send_welcome", payload={"email": "ada@example.com"})
    assert job.queue == "default"


def test_each_test_starts_with_no_job() -> None:
    assert enqueued_jobs() == []


def test_the_worker_sends_it() -> None:
    job_id = signup.sign_up("grace@example.com")

    [outcome] = run_until_empty(signup.app)

    assert outcome.job_id == job_id
    assert outcome.state == "succeeded"
    assert outcome.result == {"sent_to": "grace@example.com"}
    assert "grace@example.com" in signup.outbox
    assert enqueued_jobs() == []


def test_a_bad_address_fails_and_waits_for_its_retry() -> None:
    signup.sign_up("not-an-address")

    [outcome] = run_until_empty(signup.app)

    # The attempt failed; the job is queued again, due after the retry backoff.
    assert outcome.state == "queued"
    assert outcome.attempt == 1
    assert outcome.error == "ValueError: not an email address: 'not-an-address'"
    assert_enqueued(task="send_welcome", payload={"email": "not-an-address"})
