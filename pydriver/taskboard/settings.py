"""Worker and client settings, read from TASKBOARD_* environment variables."""

from __future__ import annotations

import math
import os
import socket
from typing import Annotated, Any

import psycopg
from psycopg import conninfo
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from taskboard.errors import ConfigError

DEFAULT_POOL_SIZE = 10  # connections the worker opens in all
MIN_POOL_SIZE = 3  # renewal + control + at least one handler
MAX_POOL_SIZE = 1002  # claim hands out at most 1000 jobs a call: one per handler slot
DEFAULT_LEASE_SECONDS = 60.0
DEFAULT_POLL_INTERVAL_SECONDS = 1.0
DEFAULT_SHUTDOWN_GRACE_SECONDS = 25.0  # below common orchestrator kill timeouts (30 s)
DEFAULT_PREPARE_THRESHOLD = 5  # psycopg's own default
DEFAULT_STATS_INTERVAL_SECONDS = 60.0
# A job of a task this worker does not know goes back to the queue for this
# long (no attempt used), for a worker that knows it: rolling deploys.
DEFAULT_UNKNOWN_TASK_DELAY_SECONDS = 30.0
MIN_UNKNOWN_TASK_DELAY_SECONDS = 1.0  # shorter, and one such job is claimed and released in a loop
# Workers delete jobs that finished longer ago than this: a week keeps a
# weekend's dead jobs for a person to look at and results for late readers;
# finished rows do not slow claim (its indexes hold unfinished jobs only),
# they only take disk. `none` keeps every job.
DEFAULT_RETENTION_SECONDS = 7 * 86400.0
# prune's own bound on older_than: clock - retention must be a time PostgreSQL holds.
MAX_RETENTION_SECONDS = 36500 * 86400.0  # 100 years
MAX_LEASE_SECONDS = 12 * 3600.0  # the longest lease the SQL functions will accept
CONNECT_TIMEOUT_SECONDS = 10  # at most; renew_every when shorter (libpq: at least 2)
MIN_CONNECT_TIMEOUT_SECONDS = 2  # libpq's floor
# A connection whose peer went away is noticed within renew_every: after
# half of it idle, KEEPALIVE_PROBES probes a sixth of it apart, or when sent
# data goes unacknowledged for all of it (tcp_user_timeout).
KEEPALIVE_PROBES = 3
# The shortest default statement deadline: a claim or an enqueue on a busy server may
# take a second without anything being wrong.
MIN_STATEMENT_DEADLINE_SECONDS = 2.0
# What libpq reads from the environment instead of the URL (PGCONNECT_TIMEOUT, ...).
LIBPQ_ENVIRONMENT = {"connect_timeout": "PGCONNECT_TIMEOUT"}
NO_LISTEN = "none"
MAX_NAME_CHARS = 200  # the SQL functions' bound on queue and task names
DEFAULT_METRICS_HOST = "127.0.0.1"  # /metrics is served on loopback unless told otherwise
MAX_CONCURRENCY = 10_000  # handlers one worker process may run at once
DEFAULT_DASHBOARD_HOST = "127.0.0.1"  # the dashboard too
DEFAULT_DASHBOARD_PORT = 8080
DEFAULT_DASHBOARD_USER = "taskboard"


def name_problem(what: str, value: object) -> str | None:
    """Why `value` cannot be a queue or task name (what the SQL functions refuse), or None."""
    if not isinstance(value, str):
        return f"{what} must be a string, got {value!r}"
    if not value:
        return f"{what} must not be empty"
    if len(value) > MAX_NAME_CHARS:
        return f"{what} must be at most {MAX_NAME_CHARS} characters, got {len(value)}"
    return None


def default_worker_name() -> str:
    """`HOST-PID`, the host's name and this process's id."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Settings(BaseSettings):
    """What a worker or client needs to know. Every field reads from `TASKBOARD_<NAME>`.

    Durations are float seconds. `renew_every` defaults to a third of `lease`;
    a lease shorter than twice `renew_every` is refused, since one late
    renewal would then lose the job.
    """

    model_config = SettingsConfigDict(env_prefix="TASKBOARD_", extra="forbid", allow_inf_nan=False)

    database_url: str = Field(
        repr=False,  # may hold a password
        description="libpq connection string or URL of the database.",
    )
    pool_size: int = Field(
        DEFAULT_POOL_SIZE,
        ge=MIN_POOL_SIZE,
        le=MAX_POOL_SIZE,
        description="Connections a worker opens in all: one for renewal, one for control and "
        "`pool_size - 2` for handlers (a claim hands out at most 1000 jobs, one a handler "
        "connection).",
    )
    # Handlers that hold no connection (plain ones) are not bounded by the pool: see max_handlers.
    concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="Handlers that may run at once; unset: `pool_size - 2`. Plain handlers "
        "hold no connection; a transactional one holds one of the `pool_size - 2` handler "
        "connections while it runs, so a worker with a transactional task runs at most "
        "`pool_size - 2` at once.",
    )
    cycles_in_flight: int = Field(
        1,
        ge=1,
        le=2,
        description="Claim/complete cycles a worker keeps in flight, each on a connection of "
        "its own. 2: a second control connection, beyond `pool_size`, carries a second "
        "cycle, and each claim asks for at most half the handler slots, so the database "
        "works on one cycle while the worker's Python handles the other.",
    )
    lease: float = Field(
        DEFAULT_LEASE_SECONDS,
        gt=0,
        le=MAX_LEASE_SECONDS,
        description="Seconds of lease asked of `claim` and `renew_many`.",
    )
    renew_every: float | None = Field(
        None,
        gt=0,
        description="Seconds between renewals of the worker's leases; unset: a third of "
        "`lease`. `lease` must be at least twice it, so that one late renewal loses no job.",
    )
    queues: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated queues to claim from; empty: the queues of the app's "
        "registered tasks. `app.worker(queues=[...])`, `app.run_worker(queues=...)` and "
        "`taskboard worker --queue` set it too.",
    )
    poll_interval: float = Field(
        DEFAULT_POLL_INTERVAL_SECONDS,
        gt=0,
        description="Seconds between claims when no notification arrives.",
    )
    shutdown_grace: float = Field(
        DEFAULT_SHUTDOWN_GRACE_SECONDS,
        ge=0,
        description="Seconds handlers may take to finish after SIGTERM (below the common "
        "30-second kill timeouts).",
    )
    worker_name: str = Field(
        default_factory=default_worker_name,
        min_length=1,
        max_length=200,
        description="Recorded as the job's `claimed_by` and in its error history.",
    )
    listen_url: str = Field(
        "",
        repr=False,
        description="A direct connection for LISTEN when `database_url` goes through "
        "PgBouncer in transaction mode; empty: `database_url`; `none`: poll only.",
    )
    prepare_threshold: int | None = Field(
        DEFAULT_PREPARE_THRESHOLD,
        description="psycopg's `prepare_threshold`; `none` (no prepared statements) behind "
        "PgBouncer in transaction mode.",
    )
    statement_deadline: float | None = Field(
        None,
        gt=0,
        le=MAX_LEASE_SECONDS,
        description="Seconds the server has to answer each statement the driver sends on its "
        "own connections (a worker's, and enqueue's without `conn`); past it the connection "
        "is dropped, without a cancel request, and made again, through the URL's other hosts "
        "when it names several. Unset: `renew_every`, at least 2 seconds (renewal's own "
        "statements: `renew_every` at most).",
    )
    stats_interval: float = Field(
        DEFAULT_STATS_INTERVAL_SECONDS,
        gt=0,
        description="Seconds between two logs of the worker's counters.",
    )
    unknown_task_delay: float = Field(
        DEFAULT_UNKNOWN_TASK_DELAY_SECONDS,
        ge=MIN_UNKNOWN_TASK_DELAY_SECONDS,
        le=MAX_LEASE_SECONDS,
        description="Seconds a job of a task this worker does not know goes back to the "
        "queue for (no attempt used), for a worker that knows it: rolling deploys.",
    )
    retention: float | None = Field(
        DEFAULT_RETENTION_SECONDS,
        gt=0,
        le=MAX_RETENTION_SECONDS,
        description="Workers delete jobs that finished longer ago than this many seconds (a "
        "week by default) when their login holds the admin role (prune is the admin's); a "
        "worker login without it keeps every job and says so once: run `taskboard prune` "
        "as an admin instead. `none` keeps every job.",
    )
    metrics_port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="The worker serves Prometheus `/metrics` on this TCP port (needs `pip "
        "install 'taskboard-pg[metrics]'`); unset: off. Also `taskboard metrics`' default "
        "port.",
    )
    metrics_host: str = Field(
        DEFAULT_METRICS_HOST,
        min_length=1,
        description="The address `/metrics` is served on; `0.0.0.0` for a scraper on another host.",
    )
    dashboard_host: str = Field(
        DEFAULT_DASHBOARD_HOST,
        min_length=1,
        description="The address `taskboard dashboard` (extra `taskboard-pg[web]`) listens "
        "on; beyond loopback without a password, it warns.",
    )
    dashboard_port: int = Field(
        DEFAULT_DASHBOARD_PORT,
        ge=1,
        le=65535,
        description="The TCP port `taskboard dashboard` listens on.",
    )
    dashboard_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated host names the dashboard answers to besides loopback's "
        "and the address it listens on (the `Host` header), whatever that address; others "
        "get 421, so that a site whose name resolves to this machine cannot script the "
        "dashboard (DNS rebinding).",
    )
    dashboard_user: str = Field(
        DEFAULT_DASHBOARD_USER,
        min_length=1,
        max_length=200,
        description="The HTTP Basic user, when `dashboard_password` is set.",
    )
    dashboard_password: str | None = Field(
        None,
        min_length=8,
        repr=False,
        description="Every request to the dashboard must give it (HTTP Basic, as "
        "`dashboard_user`); unset: no authentication.",
    )

    @field_validator("database_url")
    @classmethod
    def _database_url_given(cls, value: str) -> str:
        # Empty, libpq would connect to its defaults (the local socket) instead.
        if not value.strip():
            raise PydanticCustomError("missing", "Field required")
        try:
            conninfo.conninfo_to_dict(value)
        except psycopg.ProgrammingError as exc:
            raise PydanticCustomError(
                "database_url",
                "not a connection URL (postgresql://USER@HOST/DATABASE) or libpq "
                "conninfo (host=... dbname=...): {reason}",
                {"reason": str(exc).strip()},
            ) from None
        return value

    @field_validator("queues", "dashboard_allowed_hosts", mode="before")
    @classmethod
    def _split_queues(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [q.strip() for q in value.split(",") if q.strip()]
        return value

    @field_validator("queues")
    @classmethod
    def _queue_names(cls, value: list[str]) -> list[str]:
        for queue in value:
            problem = name_problem("each queue", queue)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("prepare_threshold", "retention", "metrics_port", "concurrency", mode="before")
    @classmethod
    def _none_means_off(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("none", ""):
            return None
        return value

    @model_validator(mode="after")
    def _lease_outlives_two_renewals(self) -> Settings:
        if self.renew_every is None:
            self.renew_every = self.lease / 3
        if self.lease < 2 * self.renew_every:
            raise ValueError(
                f"lease ({self.lease:g} s) must be at least twice renew_every ({self.renew_every:g} s)"
            )
        return self

    @property
    def renew_interval(self) -> float:
        """Seconds between two renewals of every held lease."""
        assert self.renew_every is not None
        return self.renew_every

    @property
    def deadline(self) -> float:
        """Seconds the server has to answer a statement on the driver's own connections."""
        if self.statement_deadline is not None:
            return self.statement_deadline
        return max(self.renew_interval, MIN_STATEMENT_DEADLINE_SECONDS)

    @property
    def connect_timeout(self) -> int:
        """libpq's connect_timeout, per host: renew_every, between 2 and 10 seconds."""
        seconds = math.ceil(self.renew_interval)
        return max(MIN_CONNECT_TIMEOUT_SECONDS, min(CONNECT_TIMEOUT_SECONDS, seconds))

    def keepalive_options(self) -> dict[str, int]:
        """libpq's TCP options that notice a peer gone quiet within about renew_every."""
        every = self.renew_interval
        return {
            "keepalives": 1,
            "keepalives_idle": max(1, int(every / 2)),
            "keepalives_interval": max(1, int(every / (2 * KEEPALIVE_PROBES))),
            "keepalives_count": KEEPALIVE_PROBES,
            "tcp_user_timeout": max(1000, int(every * 1000)),  # milliseconds
        }

    @property
    def detection_bound(self) -> float:
        """Seconds within which a connection to a server that stopped answering is given up:
        the statement deadline, and the keepalives' bound for one that sends nothing."""
        keep = self.keepalive_options()
        probing = keep["keepalives_idle"] + keep["keepalives_interval"] * keep["keepalives_count"]
        return float(max(self.deadline, probing, keep["tcp_user_timeout"] / 1000))

    @property
    def handler_slots(self) -> int:
        """Connections for handlers: the pool minus renewal's and control's.

        A transactional handler holds one while it runs; a claim asks for at
        most this many jobs, so every job it hands out can get one at once.
        """
        return self.pool_size - 2

    @property
    def max_handlers(self) -> int:
        """How many handlers may run at once: `concurrency`, else pool_size - 2."""
        return self.handler_slots if self.concurrency is None else self.concurrency

    def connection_options(
        self,
        *,
        autocommit: bool = True,
        application_name: str | None = None,
        url: str | None = None,
    ) -> dict[str, Any]:
        """psycopg connection options for every connection the driver opens, to `url`
        (default `database_url`).

        `connect_timeout`, TCP keepalives and `tcp_user_timeout` (see
        keepalive_options) are added where `url` and the environment do not set
        them: the URL's own values win.
        """
        options: dict[str, Any] = {
            "autocommit": autocommit,
            "prepare_threshold": self.prepare_threshold,
            # Text goes as UTF-8 whatever the server's encoding: payloads, results, errors.
            "client_encoding": "utf8",
        }
        try:
            given = conninfo.conninfo_to_dict(self.database_url if url is None else url)
        except Exception:  # noqa: BLE001 - psycopg says what is wrong with it when connecting
            given = {}
        network = {"connect_timeout": self.connect_timeout, **self.keepalive_options()}
        for name, value in network.items():
            if name not in given and LIBPQ_ENVIRONMENT.get(name, "") not in os.environ:
                options[name] = value
        if application_name is not None:
            options["application_name"] = application_name[:63]
        return options

    @property
    def application_name(self) -> str:
        """What a worker's connections show in pg_stat_activity: `taskboard <worker_name>`."""
        return f"taskboard {self.worker_name}"

    @property
    def listen_target(self) -> str | None:
        """Where to LISTEN: None to poll only, else a connection URL."""
        if self.listen_url.strip().lower() == NO_LISTEN:
            return None
        return self.listen_url or self.database_url


def load_settings(**overrides: Any) -> Settings:
    """Read Settings from the environment and `overrides`.

    Raises ConfigError with one line naming what is wrong.
    """
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(describe(exc)) from None


def describe(exc: ValidationError) -> str:
    """One line for a validation error: the setting's environment name and what is wrong."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        name = f"TASKBOARD_{field.upper()}" if field else "settings"
        if err["type"] == "missing":
            problems.append(f"{name} is required")
        else:
            message = err["msg"].removeprefix("Value error, ")
            problems.append(f"{name}: {message}")
    return "; ".join(problems)


def with_overrides(settings: Settings, **overrides: Any) -> Settings:
    """A copy of `settings` with `overrides` applied and validated again.

    A new lease without a new renew_every gets the default third of it.
    Raises ConfigError as load_settings does.
    """
    base = settings.model_dump()
    if "lease" in overrides and "renew_every" not in overrides:
        base.pop("renew_every")
    return load_settings(**{**base, **overrides})
