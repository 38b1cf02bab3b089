"""Settings read from TASKBOARD_* variables: defaults, parsing, and one-line refusals."""

from __future__ import annotations

import os
import socket

import pytest

from taskboard import Taskboard
from taskboard.errors import ConfigError
from taskboard.settings import load_settings, with_overrides

URL = "postgresql://app@/jobs?host=/run/postgresql"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Only TASKBOARD_DATABASE_URL set: what the test run exports does not leak in."""
    for name in list(os.environ):
        if name.startswith("TASKBOARD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TASKBOARD_DATABASE_URL", URL)
    return monkeypatch


def refusal(**overrides: object) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(**overrides)
    message = str(caught.value)
    assert "\n" not in message, "a settings error is one line"
    return message


def test_defaults() -> None:
    settings = load_settings()
    assert settings.database_url == URL
    assert settings.pool_size == 10
    assert settings.handler_slots == 8
    assert settings.lease == 60
    assert settings.renew_every == settings.renew_interval == 20
    assert settings.queues == []
    assert settings.poll_interval == 1
    assert settings.shutdown_grace == 25
    assert settings.worker_name == f"{socket.gethostname()}-{os.getpid()}"
    assert settings.listen_url == ""
    assert settings.prepare_threshold == 5


def test_renew_every_defaults_to_a_third_of_the_lease(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_LEASE", "45")
    assert load_settings().renew_interval == 15


def test_an_empty_listen_url_listens_on_the_database_url() -> None:
    assert load_settings().listen_target == URL


def test_listen_url_none_polls_only(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_LISTEN_URL", "none")
    assert load_settings().listen_target is None
    environment.setenv("TASKBOARD_LISTEN_URL", "NONE")
    assert load_settings().listen_target is None


def test_a_listen_url_is_where_the_worker_listens(environment: pytest.MonkeyPatch) -> None:
    direct = "postgresql://app@db-direct/jobs"
    environment.setenv("TASKBOARD_LISTEN_URL", direct)
    assert load_settings().listen_target == direct


def test_prepare_threshold_none_turns_prepared_statements_off(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.setenv("TASKBOARD_PREPARE_THRESHOLD", "none")
    assert load_settings().prepare_threshold is None
    environment.setenv("TASKBOARD_PREPARE_THRESHOLD", "0")
    assert load_settings().prepare_threshold == 0


def test_queues_are_a_comma_separated_list(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_QUEUES", "a,b")
    assert load_settings().queues == ["a", "b"]
    environment.setenv("TASKBOARD_QUEUES", " emails , ,reports ")
    assert load_settings().queues == ["emails", "reports"]
    environment.setenv("TASKBOARD_QUEUES", "")
    assert load_settings().queues == []


def test_numbers_come_from_the_environment(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_POOL_SIZE", "3")
    environment.setenv("TASKBOARD_POLL_INTERVAL", "0.25")
    environment.setenv("TASKBOARD_SHUTDOWN_GRACE", "0")
    environment.setenv("TASKBOARD_WORKER_NAME", "w1")
    settings = load_settings()
    assert (settings.pool_size, settings.handler_slots) == (3, 1)
    assert settings.poll_interval == 0.25
    assert settings.shutdown_grace == 0
    assert settings.worker_name == "w1"


def test_a_pool_smaller_than_three_is_refused(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_POOL_SIZE", "2")
    message = refusal()
    assert message.startswith("TASKBOARD_POOL_SIZE: "), message


def test_a_lease_shorter_than_two_renewals_is_refused(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("TASKBOARD_LEASE", "10")
    environment.setenv("TASKBOARD_RENEW_EVERY", "6")
    message = refusal()
    assert "lease (10 s) must be at least twice renew_every (6 s)" in message
    environment.setenv("TASKBOARD_RENEW_EVERY", "5")
    assert load_settings().renew_interval == 5, "exactly two renewals per lease is allowed"


def test_a_missing_database_url_is_one_line_naming_the_variable(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.delenv("TASKBOARD_DATABASE_URL")
    assert refusal() == "TASKBOARD_DATABASE_URL is required"


@pytest.mark.parametrize("blank", ["", " ", "\t\n "], ids=["empty", "space", "whitespace"])
def test_an_empty_database_url_is_as_missing(environment: pytest.MonkeyPatch, blank: str) -> None:
    # libpq would take it for its defaults and fail on a local socket instead.
    environment.setenv("TASKBOARD_DATABASE_URL", blank)
    assert refusal() == "TASKBOARD_DATABASE_URL is required"
    assert refusal(database_url=blank) == "TASKBOARD_DATABASE_URL is required"


@pytest.mark.parametrize("given", ["not a url", "dbname='x", "postgresql://u@h/d?nosuchoption=1"])
def test_a_database_url_libpq_cannot_read_is_one_line_naming_the_variable(
    environment: pytest.MonkeyPatch, given: str
) -> None:
    environment.setenv("TASKBOARD_DATABASE_URL", given)
    message = refusal()
    assert message.startswith(
        "TASKBOARD_DATABASE_URL: not a connection URL (postgresql://USER@HOST/DATABASE) or "
        "libpq conninfo (host=... dbname=...): "
    ), message
    assert "\n" not in message


def test_taskboard_with_an_empty_database_url_says_it_is_required(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.setenv("TASKBOARD_DATABASE_URL", " ")
    with pytest.raises(ConfigError, match=r"^TASKBOARD_DATABASE_URL is required$"):
        Taskboard().enqueue("ping")


def test_every_problem_is_named_on_the_one_line() -> None:
    message = refusal(pool_size=1, lease=0)
    assert "TASKBOARD_POOL_SIZE" in message and "TASKBOARD_LEASE" in message


def test_other_taskboard_variables_are_ignored(environment: pytest.MonkeyPatch) -> None:
    # `make test` exports TASKBOARD_TEST_DATABASE_URL beside the real settings.
    environment.setenv("TASKBOARD_TEST_DATABASE_URL", "postgresql://elsewhere/db")
    assert load_settings().database_url == URL


def test_with_overrides_recomputes_renew_every_when_only_the_lease_changes() -> None:
    settings = load_settings()
    shorter = with_overrides(settings, lease=30)
    assert (shorter.lease, shorter.renew_interval) == (30, 10)
    assert settings.renew_interval == 20, "the original settings are left alone"


def test_with_overrides_keeps_a_renew_every_given_with_the_lease() -> None:
    changed = with_overrides(load_settings(), lease=30, renew_every=12)
    assert (changed.lease, changed.renew_interval) == (30, 12)


def test_with_overrides_keeps_what_it_does_not_override() -> None:
    settings = load_settings(pool_size=4, worker_name="keep-me", queues=["q"])
    changed = with_overrides(settings, lease=90)
    assert (changed.pool_size, changed.worker_name, changed.queues) == (4, "keep-me", ["q"])
    assert changed.renew_interval == 30


def test_with_overrides_validates_again() -> None:
    with pytest.raises(ConfigError, match="TASKBOARD_POOL_SIZE"):
        with_overrides(load_settings(), pool_size=2)


@pytest.mark.parametrize(
    ("overrides", "variable"),
    [
        ({"unknown_task_delay": 0}, "TASKBOARD_UNKNOWN_TASK_DELAY"),
        ({"pool_size": 1003}, "TASKBOARD_POOL_SIZE"),
        ({"queues": ["good", "q" * 201]}, "TASKBOARD_QUEUES"),
        ({"queues": ["good", ""]}, "TASKBOARD_QUEUES"),
        ({"lease": float("inf")}, "TASKBOARD_LEASE"),
        ({"lease": 12 * 3600 + 1}, "TASKBOARD_LEASE"),
    ],
)
def test_settings_a_worker_could_not_work_with_are_refused_naming_the_variable(
    overrides: dict[str, object], variable: str
) -> None:
    """Each would start a worker that never claims, or claims and releases in a loop."""
    assert refusal(**overrides).startswith(variable)
