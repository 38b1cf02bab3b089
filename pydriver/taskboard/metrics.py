"""Prometheus metrics: a worker's own, and the queue exporter's (extra ``taskboard-pg[metrics]``).

A worker with ``metrics_port`` set serves ``/metrics`` from its job events
(see taskboard.events) and its own counts of handlers and leases; it never
asks the database for them. Queue depth is the database's, read by one
exporter (``taskboard metrics``) on each scrape, so that a hundred workers
do not each run the same query.

Both serve with prometheus_client's HTTP server in a daemon thread: a scrape
never waits for the event loop, so a loop blocked by a handler still shows,
as ``taskboard_seconds_since_last_renewal`` growing.

Labels are bounded: queue, task, outcome and state; never a job id.
prometheus_client is imported only when metrics are turned on.
"""

from __future__ import annotations

import datetime as dt
import importlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import psycopg

from taskboard.errors import ConfigError, SchemaVersionError
from taskboard.events import JobEvent
from taskboard.sql import dashboard as sql_dashboard
from taskboard.sql import session

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'taskboard-pg[metrics]'"
# Handler durations: from a few milliseconds to an hour-long batch job.
HANDLER_BUCKETS_SECONDS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
)  # fmt: skip
# Claim to handler start: normally milliseconds; seconds mean a starved event loop.
START_BUCKETS_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
# Start lag, from a job becoming due to its handler starting: milliseconds when
# workers keep up, up to hours for a backlog.
LAG_BUCKETS_SECONDS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0, 900.0, 3600.0, 14400.0,
)  # fmt: skip
JOB_STATES = ("queued", "running", "succeeded", "dead", "cancelled")
# And jobs waiting for others to end.
WAITING_STATE = "waiting"
EXPORTER_APPLICATION_NAME = "taskboard metrics"


def prometheus() -> ModuleType:
    """The prometheus_client module; ConfigError naming the extra when it is not installed."""
    try:
        return importlib.import_module("prometheus_client")
    except ImportError:
        raise ConfigError(
            f"metrics need prometheus-client, which is not installed: {INSTALL_HINT}"
        ) from None


class WorkerMetrics:
    """One worker's metrics: `hook` receives its job events; `watch` gives it the gauges' sources.

    `hook` runs on the worker's event loop and touches only in-process
    counters; the gauges are read by the scraping thread.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        client = prometheus()
        self.registry: CollectorRegistry = registry or client.CollectorRegistry()
        self.jobs = client.Counter(
            "taskboard_jobs",
            "Claims of this worker by outcome: claimed; succeeded, failed (queued again), dead "
            "(no attempt left) as the database answered; refused (complete or fail refused: the "
            "token was stale); lost (given up); released (handed back).",
            ["queue", "task", "outcome"],
            registry=self.registry,
        )
        self.handler_duration = client.Histogram(
            "taskboard_handler_duration_seconds",
            "Seconds from a handler's start to its end, for handlers that returned or raised.",
            ["queue", "task"],
            buckets=HANDLER_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.claim_to_start = client.Histogram(
            "taskboard_claim_to_start_seconds",
            "Seconds from this worker sending the claim that took a job to the job's handler "
            "starting (this worker's clock).",
            ["queue", "task"],
            buckets=START_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.start_lag = client.Histogram(
            "taskboard_start_lag_seconds",
            "Seconds from a job becoming due (its run_at, or an expired lease's deadline) to its "
            "handler starting: the database's count at the claim plus this worker's from the "
            "claim's answer to the start.",
            ["queue", "task"],
            buckets=LAG_BUCKETS_SECONDS,
            registry=self.registry,
        )
        self.running = client.Gauge(
            "taskboard_running_handlers",
            "Handlers occupying a slot of this worker.",
            registry=self.registry,
        )
        self.free = client.Gauge(
            "taskboard_free_slots",
            "Handler slots of this worker free for the next claim.",
            registry=self.registry,
        )
        self.held = client.Gauge(
            "taskboard_held_leases",
            "Claims this worker holds: running, or settling their outcome.",
            registry=self.registry,
        )
        self.since_renewal = client.Gauge(
            "taskboard_seconds_since_last_renewal",
            "The longest any lease this worker holds has gone since the database last confirmed "
            "it (its claim or its last successful renewal answered); 0 when it holds none.",
            registry=self.registry,
        )
        self.since_renewal.set_function(self.seconds_since_confirmed)
        self._lock = threading.Lock()
        self._confirmed: dict[uuid.UUID, float] = {}  # token -> monotonic time of last confirmation
        self._started: dict[uuid.UUID, float] = {}  # token -> monotonic time its handler started
        self._claim_sent: dict[uuid.UUID, dt.datetime] = {}  # token -> wall time its claim was sent
        # token -> (wall time the claim answered, how long the job had waited by then)
        self._waited: dict[uuid.UUID, tuple[dt.datetime, dt.timedelta]] = {}
        # (metric, label values) -> its child: labels() takes a lock and a lookup each call.
        self._children: dict[tuple[Any, ...], Any] = {}

    def watch(
        self,
        *,
        running: Callable[[], int],
        free: Callable[[], int],
        held: Callable[[], int],
    ) -> None:
        """Read the worker's own counts on each scrape (each callable returns an int)."""
        self.running.set_function(running)
        self.free.set_function(free)
        self.held.set_function(held)

    def seconds_since_confirmed(self) -> float:
        now = time.monotonic()
        with self._lock:
            oldest = min(self._confirmed.values(), default=None)
        return 0.0 if oldest is None else max(now - oldest, 0.0)

    def hook(self, event: JobEvent) -> None:
        """Count one job event (an EventHook: quick, no database call)."""
        now = time.monotonic()
        kind = event.kind
        if kind == "claimed":
            self._count(event, "claimed")
            if event.sent_at is not None:
                self._claim_sent[event.token] = event.sent_at
            waited = getattr(event.claimed, "waited", None)
            if waited is not None:
                self._waited[event.token] = (event.at, waited)
            with self._lock:
                self._confirmed[event.token] = now
        elif kind == "renewed":
            if event.answer is not None:
                with self._lock:
                    if event.token in self._confirmed:
                        self._confirmed[event.token] = now
        elif kind == "started":
            self._started[event.token] = now
            sent = self._claim_sent.pop(event.token, None)
            if sent is not None:
                lag = (event.at - sent).total_seconds()
                self._child(self.claim_to_start, event.queue, event.task).observe(max(lag, 0.0))
            due = self._waited.pop(event.token, None)
            if due is not None:
                answered, waited = due
                total = waited.total_seconds() + max((event.at - answered).total_seconds(), 0.0)
                self._child(self.start_lag, event.queue, event.task).observe(max(total, 0.0))
        elif kind == "finished":
            began = self._started.pop(event.token, None)
            if began is not None and event.outcome in ("complete", "fail"):
                self._child(self.handler_duration, event.queue, event.task).observe(now - began)
        elif kind == "settled":
            self._count(event, settled_outcome(event))
            self._forget(event.token)
        elif kind == "released":
            if event.answer:
                self._count(event, "released")
            self._forget(event.token)
        elif kind == "lost":
            self._count(event, "lost")
            self._started.pop(event.token, None)
            self._forget(event.token)

    def _count(self, event: JobEvent, outcome: str) -> None:
        self._child(self.jobs, event.queue, event.task, outcome).inc()

    def _child(self, metric: Any, *values: str) -> Any:
        """`metric.labels(*values)`, looked up once per label set (the sets are bounded)."""
        key = (id(metric), *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def _forget(self, token: uuid.UUID) -> None:
        self._claim_sent.pop(token, None)
        self._waited.pop(token, None)
        with self._lock:
            self._confirmed.pop(token, None)


def settled_outcome(event: JobEvent) -> str:
    """The jobs_total outcome of a settled event: what the database answered."""
    if event.outcome == "fail":
        if event.answer is None:
            return "refused"
        return "dead" if event.answer == "dead" else "failed"
    return "succeeded" if event.answer else "refused"


class Server:
    """prometheus_client's HTTP server for one registry, in a daemon thread."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        client = prometheus()
        try:
            self._httpd, self._thread = client.start_http_server(port, addr=host, registry=registry)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ConfigError(f"cannot serve /metrics on {host}:{port}: {why}") from None
        self.host = host
        self.port = int(self._httpd.server_address[1])

    def close(self) -> None:
        """Stop serving and close the socket (blocks for up to half a second)."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


# -- the queue exporter ------------------------------------------------------------


class QueueCollector:
    """Gauges of every queue from taskboard.queue_stats: one connection and one query a scrape.

    When the database cannot be read, the scrape shows only
    ``taskboard_exporter_database_up 0`` and the reason is logged.
    """

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect

    def describe(self) -> list[Metric]:
        return []  # registering must not query the database

    def collect(self) -> Iterator[Metric]:
        core = importlib.import_module("prometheus_client.core")
        up = core.GaugeMetricFamily(
            "taskboard_exporter_database_up",
            "1 when this scrape read taskboard.queue_stats, 0 when it could not.",
        )
        try:
            with self._connect() as conn:
                session.read_schema(conn)
                rows = sql_dashboard.queue_stats_read_at(conn)
        except (psycopg.Error, OSError, SchemaVersionError) as exc:
            log.warning("metrics: cannot read taskboard.queue_stats: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from queue_families(core, rows)


def queue_families(core: ModuleType, rows: list[dict[str, Any]]) -> Iterator[Metric]:
    """The exporter's gauges from queue_stats rows (each with `read_at`)."""
    jobs = core.GaugeMetricFamily(
        "taskboard_queue_jobs",
        "Jobs of the queue in each state.",
        labels=["queue", "state"],
    )
    runnable = core.GaugeMetricFamily(
        "taskboard_queue_runnable",
        "Jobs a claim would take now were the queue neither paused nor at one of its limits "
        "(its rate limit included): queued and due, or running with an expired lease and "
        "attempts left.",
        labels=["queue"],
    )
    oldest = core.GaugeMetricFamily(
        "taskboard_queue_oldest_queued_age_seconds",
        "Seconds (database clock) since the run_at of the queue's oldest queued job that is "
        "due; 0 when none is. Expired running leases are not counted (see "
        "taskboard_queue_runnable).",
        labels=["queue"],
    )
    paused = core.GaugeMetricFamily(
        "taskboard_queue_paused", "1 when the queue is paused.", labels=["queue"]
    )
    limit = core.GaugeMetricFamily(
        "taskboard_queue_max_running",
        "The queue's limit on running jobs across all workers; absent when it has none.",
        labels=["queue"],
    )
    key_limit = core.GaugeMetricFamily(
        "taskboard_queue_max_running_per_key",
        "The queue's limit on running jobs of one concurrency key across all workers; absent "
        "when it has none.",
        labels=["queue"],
    )
    rate_starts = core.GaugeMetricFamily(
        "taskboard_queue_rate_starts",
        "The queue's rate limit: how many jobs claim starts in any window of "
        "taskboard_queue_rate_per_seconds, across all workers (of each concurrency key when "
        "taskboard_queue_rate_by_key is 1); absent when it has none.",
        labels=["queue"],
    )
    rate_per = core.GaugeMetricFamily(
        "taskboard_queue_rate_per_seconds",
        "The length of the rate limit's window, in seconds; absent without a rate limit.",
        labels=["queue"],
    )
    rate_by_key = core.GaugeMetricFamily(
        "taskboard_queue_rate_by_key",
        "1 when the rate limit counts each concurrency key apart (jobs without a key are not "
        "limited), 0 when it counts the queue; absent without a rate limit.",
        labels=["queue"],
    )
    window_starts = core.GaugeMetricFamily(
        "taskboard_queue_window_starts",
        "Jobs started within the last window of the rate limit: of the queue, or, for a "
        "limit by key, of its busiest key; at taskboard_queue_rate_starts claim starts none "
        "until the window moves. Absent without a rate limit.",
        labels=["queue"],
    )
    by_queue: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        by_queue.setdefault(str(row["queue"]), {})[str(row["state"])] = row
    # Without a queue, no family of the queues' settings.
    controlled = rated = bool(rows)
    states_shown = (WAITING_STATE, *JOB_STATES)
    for queue, states in by_queue.items():
        for state in states_shown:
            jobs.add_metric([queue, state], states[state]["jobs"] if state in states else 0)
        runnable.add_metric([queue], sum(r["runnable"] for r in states.values()))
        queued = states.get("queued")
        age = 0.0
        if queued is not None and queued["runnable"] and queued["oldest_run_at"] is not None:
            age = max((queued["read_at"] - queued["oldest_run_at"]).total_seconds(), 0.0)
        oldest.add_metric([queue], age)
        if controlled:
            any_row = next(iter(states.values()))
            paused.add_metric([queue], 1 if any_row["paused"] else 0)
            if any_row["max_running"] is not None:
                limit.add_metric([queue], any_row["max_running"])
            if any_row["max_running_per_key"] is not None:
                key_limit.add_metric([queue], any_row["max_running_per_key"])
        if rated:
            any_row = next(iter(states.values()))
            if any_row["rate_starts"] is not None:
                rate_starts.add_metric([queue], any_row["rate_starts"])
                rate_by_key.add_metric([queue], 1 if any_row["rate_by_key"] else 0)
                rate_per.add_metric([queue], any_row["rate_per"].total_seconds())
                window_starts.add_metric([queue], any_row["window_starts"])
    yield from (jobs, runnable, oldest)
    if controlled:
        yield from (paused, limit, key_limit)
    if rated:
        yield from (rate_starts, rate_per, rate_by_key, window_starts)


def exporter_registry(connect: Callable[[], psycopg.Connection[Any]]) -> CollectorRegistry:
    """A registry holding only the queue collector."""
    client = prometheus()
    registry: CollectorRegistry = client.CollectorRegistry()
    registry.register(QueueCollector(connect))
    return registry
