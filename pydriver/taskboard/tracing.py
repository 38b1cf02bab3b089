"""OpenTelemetry tracing, when opentelemetry-api is installed (`taskboard-pg[otel]`).

Enqueue stores the caller's W3C trace context (`current_context`) with the
job; the worker runs each attempt of the job in a span of its own
(`attempt_span`), a child of the enqueuer's span with a link to it too. Without
opentelemetry-api, `current_context` answers None, `attempt_span` yields None,
and nothing else happens. With the API but no SDK configured (no tracer
provider set), nothing would record a span: `attempt_span` yields None too
and costs one check, until the application sets a provider.

The attempt span follows OpenTelemetry's messaging conventions for a
"process" span: kind CONSUMER, named `process <queue>`, with
messaging.system "taskboard", messaging.operation.type and .name "process",
messaging.destination.name (the queue) and messaging.message.id (the job
id), and Taskboard's own taskboard.job.id, .attempt, .queue, .task and, when
the handler has ended, .outcome. A failed attempt records its exception as
an event, sets error.type and the status ERROR.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
except ImportError:  # the extra is not installed: tracing is off
    ENABLED = False
else:
    ENABLED = True

log = logging.getLogger("taskboard.tracing")

TRACER_NAME = "taskboard"
MESSAGING_SYSTEM = "taskboard"
# enqueue refuses a trace context longer than this as JSON text (bytes).
MAX_TRACE_CONTEXT_BYTES = 8192
# The W3C Trace Context fields: what is kept of a context too long to store whole.
W3C_FIELDS = ("traceparent", "tracestate")


def current_context() -> dict[str, str] | None:
    """The current trace context as the propagator writes it (traceparent,
    tracestate, and whatever else the configured propagators add); None when
    opentelemetry-api is not installed or no span is active.

    A context longer than MAX_TRACE_CONTEXT_BYTES as JSON keeps its W3C
    fields only, and none at all when even those are too long.
    """
    if not ENABLED:
        return None
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    carrier = {k: v for k, v in carrier.items() if isinstance(k, str) and isinstance(v, str)}
    if fits(carrier):
        return carrier or None
    kept = {k: v for k, v in carrier.items() if k in W3C_FIELDS}
    if kept and fits(kept):
        return kept
    log.warning("the trace context is too long to store with the job: the job carries none")
    return None


def fits(carrier: Mapping[str, str]) -> bool:
    return len(json.dumps(dict(carrier)).encode("utf-8")) <= MAX_TRACE_CONTEXT_BYTES


@contextlib.contextmanager
def attempt_span(
    *,
    job_id: int,
    attempt: int,
    queue: str,
    task: str,
    trace_context: Mapping[str, str] | None,
) -> Iterator[Any]:
    """Run the body in the current span of one attempt of a job; yields the span (None
    when tracing is off).

    With the enqueuer's `trace_context`, the span is its child (the same
    trace) and links to it; without one, it is the root of a trace of its
    own. The span ends with the body. The caller says how the attempt ended
    (set_outcome, record_failure): an exception escaping the body (the
    worker cancelling a lost claim) is not the handler's failure and is not
    recorded.
    """
    if not recording():
        yield None
        return
    # The enqueuer's context, on an empty one: never the worker's own.
    parent = propagate.extract(dict(trace_context or {}), context=otel_context.Context())
    enqueuer = trace.get_current_span(parent).get_span_context()
    links = [trace.Link(enqueuer)] if enqueuer.is_valid else []
    tracer = trace.get_tracer(TRACER_NAME)
    with tracer.start_as_current_span(
        f"process {queue}",
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        links=links,
        record_exception=False,
        set_status_on_exception=False,
        attributes={
            "messaging.system": MESSAGING_SYSTEM,
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.destination.name": queue,
            "messaging.message.id": str(job_id),
            "taskboard.job.id": job_id,
            "taskboard.job.attempt": attempt,
            "taskboard.job.queue": queue,
            "taskboard.job.task": task,
        },
    ) as span:
        yield span


def recording() -> bool:
    """Whether an attempt's span would record: opentelemetry-api installed and a tracer
    provider set. The worker asks once per attempt and skips the span when not."""
    return ENABLED and _provider_set()


def _provider_set() -> bool:
    """Whether the application set a tracer provider: the API's own records nothing."""
    provider = trace.get_tracer_provider()
    return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def set_outcome(span: Any, outcome: str) -> None:
    """Record how the attempt ended: complete, fail, release or lost."""
    if span is not None:
        span.set_attribute("taskboard.job.outcome", outcome)


def record_failure(span: Any, error: str, exc: BaseException | None = None) -> None:
    """Mark the attempt failed: the exception as an event (when there is one), error.type
    and the status ERROR with `error`."""
    if span is None:
        return
    if exc is not None:
        span.record_exception(exc)
        span.set_attribute("error.type", type(exc).__qualname__)
    else:
        span.set_attribute("error.type", "taskboard.failed")
    span.set_status(trace.Status(trace.StatusCode.ERROR, error))
