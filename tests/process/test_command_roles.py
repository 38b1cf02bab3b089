"""What each command needs of its login (cli.COMMAND_NEEDS): what --help says, what the
database grants, and the GRANT a refused login is told to run, on real databases."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

import pytest
from psycopg import conninfo

from taskboard.cli import COMMAND_NEEDS, build_parser
from taskboard.errors import ROLE_KINDS
from tests.support.cli import APP, enqueue, error_line, get_job, run, run_worker_until
from tests.support.database import MakeDatabase, login_role
from tests.support.install import Domain, psql

# On PostgreSQL 15 too: what a login holds is read with pg_has_role (LOGIN_ROLES of
# taskboard.sql.session), whose rules for role membership changed in 16.
pytestmark = pytest.mark.pg15

NO_JOB = "2000000000"  # a job id no test makes
# Each command that needs a role, with arguments that reach the database and return.
CALLS = {
    "enqueue": ["enqueue", "ping"],
    "status": ["status"],
    "jobs": ["jobs"],
    "job": ["job", NO_JOB],
    "schedules": ["schedules"],
    "pause": ["pause", "roles-q"],
    "resume": ["resume", "roles-q"],
    "limit": ["limit", "roles-q", "5"],
    "discard": ["discard", "roles-q", "off"],
    "key-limit": ["key-limit", "roles-q", "1"],
    "rate-limit": ["rate-limit", "roles-q", "5/1s"],
    "cancel": ["cancel", NO_JOB],
    "retry": ["retry", NO_JOB],
    "prune": ["prune", "--older-than", "7d"],
}
# Commands that run until stopped: refused at start, checked only that way here
# (the worker's allowed run is test_a_worker_login_runs_a_worker).
SERVING = {"metrics": ["metrics", "--port", "1"], "dashboard": ["dashboard", "--port", "1"]}


def commands() -> dict[str, str]:
    """Each command of the parser and its help line in `taskboard --help`."""
    actions = build_parser()._actions
    found = next(a for a in actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help or "" for choice in found._choices_actions}


def lower(kind: str) -> list[str]:
    """The Taskboard roles below `kind`: all of them together still may not do its work."""
    return [f"taskboard_{k}" for k in ROLE_KINDS[: ROLE_KINDS.index(kind)]]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def database(make_database: MakeDatabase) -> str:
    return make_database(deploy=True)


@pytest.fixture(scope="module")
def logins(database: str) -> Iterator[dict[str, tuple[str, str]]]:
    """URL and name of a login for each set of roles: "" (none), "producer",
    "producer,worker" and each role alone."""
    sets = {"": [], **{k: [f"taskboard_{k}"] for k in ROLE_KINDS}}
    sets["producer,worker"] = lower("admin")
    with contextlib.ExitStack() as stack:
        made: dict[str, tuple[str, str]] = {}
        for name, roles in sets.items():
            url = stack.enter_context(login_role(database, *roles))
            made[name] = (url, str(conninfo.conninfo_to_dict(url)["user"]))
        yield made


# -- --help ------------------------------------------------------------------------------


def test_every_command_says_what_it_needs_in_both_helps() -> None:
    listed = commands()
    assert set(listed) == set(COMMAND_NEEDS), "each command has its line in COMMAND_NEEDS"
    top = flat(run(None, "--help").stdout)
    for name, needs in COMMAND_NEEDS.items():
        assert listed[name].endswith(f" [{needs}]"), name
        assert flat(listed[name]) in top, name
        done = run(None, name, "--help")
        assert done.returncode == 0, done.stderr
        assert f"[{needs}]" in flat(done.stdout), (name, done.stdout)


def test_every_command_of_a_role_is_checked_against_the_database() -> None:
    needing = {name for name, needs in COMMAND_NEEDS.items() if needs.role is not None}
    assert needing == {*CALLS, *SERVING, "worker"}


# -- the database agrees ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_login_with_the_role_help_names_may_run_the_command(
    logins: dict[str, tuple[str, str]], name: str
) -> None:
    url, _ = logins[str(COMMAND_NEEDS[name].role)]
    done = run(url, *CALLS[name])
    assert "permission denied" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    allowed = done.returncode == 0 or f"job {NO_JOB} does not exist" in done.stderr
    assert allowed, (done.returncode, done.stderr)


@pytest.mark.parametrize("name", sorted({*CALLS, *SERVING, "worker"}))
def test_a_login_below_that_role_is_told_the_grant_to_run(
    logins: dict[str, tuple[str, str]], name: str
) -> None:
    kind = COMMAND_NEEDS[name].role
    assert kind is not None
    below = ",".join(k for k in ROLE_KINDS[: ROLE_KINDS.index(kind)])
    url, login = logins[below]
    done = run(url, *CALLS.get(name) or SERVING.get(name) or ["worker", APP])
    holds = ", ".join(lower(kind))
    held = f"{holds}, not taskboard_{kind}" if holds else "no Taskboard role"
    assert error_line(done).endswith(
        f": this login holds {held}; as the deploying login run: GRANT taskboard_{kind} TO {login}"
    ), done.stderr
    assert done.returncode == 1


@pytest.mark.parametrize("name", ["status", "jobs", "job", "cancel", "worker"])
def test_a_login_without_any_role_is_told_it_holds_none(
    logins: dict[str, tuple[str, str]], name: str
) -> None:
    url, login = logins[""]
    done = run(url, *CALLS.get(name, ["worker", APP]))
    kind = COMMAND_NEEDS[name].role
    assert error_line(done) == (
        "taskboard: error: permission denied for schema taskboard: this login holds no "
        f"Taskboard role; as the deploying login run: GRANT taskboard_{kind} TO {login}"
    )
    assert done.returncode == 1


def test_a_worker_login_runs_a_worker(database: str, logins: dict[str, tuple[str, str]]) -> None:
    job_id = enqueue(database, "cli-echo", '{"n": 1}', "--queue=cli")
    url, _ = logins[str(COMMAND_NEEDS["worker"].role)]
    worker, log = run_worker_until(url, job_id, "succeeded", ["--queue=cli", "--pool-size=3"])
    assert worker.returncode == 0, log
    assert get_job(database, job_id)["state"] == "succeeded"


# -- another prefix -------------------------------------------------------------------------


@pytest.fixture
def domain(server_url: str) -> Iterator[Domain]:
    made = Domain(server_url)
    yield made
    made.drop()


def test_the_grant_named_is_of_the_prefix_the_schema_was_installed_with(domain: Domain) -> None:
    url = domain.database()
    script = run(None, "sql", "--prefix", domain.prefix)
    assert script.returncode == 0, script.stderr
    installed = psql(url, script.stdout)
    assert installed.returncode == 0, installed.stderr
    producer = domain.login("Producer", domain.role("producer"))  # a name SQL must quote
    nobody = domain.login("nobody")

    done = run(conninfo.make_conninfo(url, user=producer), "cancel", NO_JOB)
    assert error_line(done) == (
        "taskboard: error: permission denied for function cancel: this login holds "
        f"{domain.role('producer')}, not {domain.role('admin')}; as the deploying login run: "
        f'GRANT {domain.role("admin")} TO "{producer}"'
    )
    done = run(conninfo.make_conninfo(url, user=nobody), "worker", APP)
    assert error_line(done) == (
        "taskboard: error: permission denied for schema taskboard: this login holds no "
        f"Taskboard role; as the deploying login run: GRANT {domain.role('worker')} TO {nobody}"
    )


# -- a database without the schema ------------------------------------------------------


def test_every_command_on_a_database_without_the_schema_says_to_migrate(
    make_database: MakeDatabase,
) -> None:
    url = make_database()
    said = {command: error_line(run(url, *args)) for command, args in CALLS.items()}
    assert said == {
        command: "taskboard: error: the database has no taskboard schema: "
        "run `taskboard migrate` first"
        for command in CALLS
    }
