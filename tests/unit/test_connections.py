"""What the driver says of a connection it could not make, the network options it adds,
and the one-host URL migrate hands to Sqitch; no database (refused loopback ports only)."""

from __future__ import annotations

import os
import socket

import psycopg
import pytest

from taskboard.connections import connect_failure
from taskboard.migrate import with_host
from taskboard.settings import load_settings


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("TASKBOARD_", "PG")):
            monkeypatch.delenv(name)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def refusal(url: str) -> psycopg.OperationalError:
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(url).close()
    return caught.value


def test_a_failed_multi_host_connection_names_every_host_in_one_line() -> None:
    first, second = closed_port(), closed_port()
    exc = refusal(f"postgresql://app@127.0.0.1:{first},127.0.0.1:{second}/jobs?connect_timeout=2")
    line = connect_failure(exc)
    assert "\n" not in line
    assert f"127.0.0.1:{first}: Connection refused" in line
    assert f"127.0.0.1:{second}: Connection refused" in line


def test_a_failed_single_host_connection_keeps_libpq_s_words() -> None:
    port = closed_port()
    line = connect_failure(refusal(f"postgresql://app@127.0.0.1:{port}/jobs"))
    assert "\n" not in line
    assert f'"127.0.0.1", port {port} failed: Connection refused' in line


def test_a_read_only_server_is_named_as_such() -> None:
    exc = psycopg.OperationalError(
        'connection failed: connection to server at "127.0.0.1", port 5433 failed: '
        "session is read-only"
    )
    assert connect_failure(exc).endswith(
        "port 5433 failed: the server is read-only (a standby, or a demoted primary)"
    )


def test_network_options_follow_renew_every() -> None:
    options = load_settings(
        database_url="postgresql://app@db1,db2/jobs", lease=60
    ).connection_options()
    assert options["connect_timeout"] == 10
    assert options["keepalives"] == 1
    assert options["keepalives_idle"] == 10
    assert options["keepalives_interval"] == 3
    assert options["keepalives_count"] == 3
    assert options["tcp_user_timeout"] == 20_000
    short = load_settings(database_url="postgresql://app@db/jobs", lease=3).connection_options()
    assert short["connect_timeout"] == 2  # libpq's floor
    assert short["tcp_user_timeout"] == 1000
    assert load_settings(database_url="postgresql://app@db/jobs").detection_bound == 20


def test_the_url_s_own_network_options_win(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://app@db/jobs?keepalives_idle=99&tcp_user_timeout=0"
    options = load_settings(database_url=url).connection_options()
    assert "keepalives_idle" not in options
    assert "tcp_user_timeout" not in options
    assert options["keepalives_interval"] == 3
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "30")
    assert "connect_timeout" not in load_settings(database_url=url).connection_options()
    listen = "postgresql://app@direct/jobs?connect_timeout=4"
    settings = load_settings(database_url=url, listen_url=listen)
    assert "connect_timeout" not in settings.connection_options(url=listen)


def test_statement_deadline_defaults_to_renew_every_at_least_2_seconds() -> None:
    assert load_settings(database_url="postgresql://app@db/jobs", lease=30).deadline == 10
    assert load_settings(database_url="postgresql://app@db/jobs", lease=3).deadline == 2
    given = load_settings(database_url="postgresql://app@db/jobs", statement_deadline=4)
    assert given.deadline == 4


@pytest.mark.parametrize(
    ("url", "host", "port", "expected"),
    [
        (
            "postgresql://deployer:s3cret@db1:5432,db2:5433/app?target_session_attrs=read-write",
            "db2",
            5433,
            "postgresql://deployer:s3cret@db2:5433/app?target_session_attrs=read-write",
        ),
        (
            "postgresql://deployer@/app?host=db1,db2&port=5432,5433",
            "db1",
            5432,
            "postgresql://deployer@db1:5432/app",
        ),
        ("postgresql://u@a,b/app", "::1", 5432, "postgresql://u@[::1]:5432/app"),
        ("postgresql://u@a,b/app", "/run/pg", 5432, "postgresql://u@/app?host=/run/pg&port=5432"),
    ],
)
def test_migrate_names_the_primary_alone(url: str, host: str, port: int, expected: str) -> None:
    assert with_host(url, host, port) == expected
