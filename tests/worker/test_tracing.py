"""Tracing (taskboard.tracing): the enqueuer's trace context travels with the job, and each
attempt runs in a span of its own, recorded here by the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from taskboard import AsyncContext, SyncContext, Taskboard, load_settings
from tests.support.database import MakeDatabase

DEADLINE_SECONDS = 60.0
FAST: dict[str, Any] = {"pool_size": 3, "lease": 3, "renew_every": 1, "poll_interval": 0.2}
QUEUE = "traced"

EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
# The test's own spans come from the provider directly: the global one is set once per
# process, and the worker's spans come from it.
TRACER = PROVIDER.get_tracer("tests.test_tracing")


@pytest.fixture(autouse=True)
def spans() -> Iterator[InMemorySpanExporter]:
    trace.set_tracer_provider(PROVIDER)  # a no-op after the first time, with a warning
    assert trace.get_tracer_provider() is PROVIDER, "another tracer provider is installed"
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


def make_app(url: str) -> Taskboard:
    return Taskboard(load_settings(database_url=url, worker_name="inproc"))


def stored_context(url: str, job_id: int) -> Any:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT trace_context FROM taskboard.jobs WHERE id = %s", [job_id])
        found = row.fetchone()
    assert found is not None
    return found[0]


def finished(url: str, *job_ids: int) -> Callable[[], bool]:
    def check() -> bool:
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT count(*) FROM taskboard.jobs WHERE id = ANY(%s)"
                " AND state IN ('succeeded', 'dead', 'cancelled')",
                [list(job_ids)],
            ).fetchone()
        return rows is not None and rows[0] == len(job_ids)

    return check


def run_worker_until(app: Taskboard, condition: Callable[[], bool]) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, **FAST))
        deadline = time.monotonic() + DEADLINE_SECONDS
        try:
            while not await asyncio.to_thread(condition):
                if worker.done():
                    worker.result()
                    raise AssertionError("the worker ended by itself")
                assert time.monotonic() < deadline, "the jobs did not finish in time"
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)

    asyncio.run(main())


def traceparent(span: trace.Span) -> str:
    """The W3C traceparent header of `span`."""
    sc = span.get_span_context()
    return f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{int(sc.trace_flags):02x}"


def attempt_spans(exporter: InMemorySpanExporter, job_id: int) -> list[ReadableSpan]:
    return [
        s
        for s in exporter.get_finished_spans()
        if s.attributes is not None and s.attributes.get("taskboard.job.id") == job_id
    ]


def only_attempt_span(exporter: InMemorySpanExporter, job_id: int) -> ReadableSpan:
    found = attempt_spans(exporter, job_id)
    assert len(found) == 1, found
    return found[0]


def test_the_handlers_span_continues_the_trace_of_the_code_that_enqueued(
    make_database: MakeDatabase, spans: InMemorySpanExporter
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    inner: dict[str, Any] = {}

    @app.task("send", queue=QUEUE)
    async def send(ctx: AsyncContext, payload: Any) -> None:
        with TRACER.start_as_current_span("inside the handler") as span:
            inner["parent"] = span.parent  # type: ignore[attr-defined]

    with TRACER.start_as_current_span("request") as request:
        job_id = app.enqueue("send", {"n": 1})
    app.close()
    enqueuer = request.get_span_context()

    assert stored_context(url, job_id)["traceparent"] == traceparent(request)
    run_worker_until(app, finished(url, job_id))

    span = only_attempt_span(spans, job_id)
    assert span.name == f"process {QUEUE}"
    assert span.kind is SpanKind.CONSUMER
    assert span.context is not None and span.context.trace_id == enqueuer.trace_id
    assert span.parent is not None and span.parent.span_id == enqueuer.span_id
    assert [link.context.span_id for link in span.links] == [enqueuer.span_id]
    assert dict(span.attributes or {}) == {
        "messaging.system": "taskboard",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": QUEUE,
        "messaging.message.id": str(job_id),
        "taskboard.job.id": job_id,
        "taskboard.job.attempt": 1,
        "taskboard.job.queue": QUEUE,
        "taskboard.job.task": "send",
        "taskboard.job.outcome": "complete",
    }
    assert span.status.status_code is StatusCode.UNSET
    # Spans the handler makes are children of the attempt's span.
    assert inner["parent"] is not None and inner["parent"].span_id == span.context.span_id


def test_a_failing_handlers_span_has_status_error_and_the_exception(
    make_database: MakeDatabase, spans: InMemorySpanExporter
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("explode", queue=QUEUE, max_attempts=1)
    def explode(ctx: SyncContext, payload: Any) -> None:
        with TRACER.start_as_current_span("inside the sync handler"):
            raise ValueError("no such recipient")

    with TRACER.start_as_current_span("request"):
        job_id = app.enqueue("explode")
    app.close()
    run_worker_until(app, finished(url, job_id))

    span = only_attempt_span(spans, job_id)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ValueError: no such recipient"
    assert span.attributes is not None
    assert span.attributes["taskboard.job.outcome"] == "fail"
    assert span.attributes["error.type"] == "ValueError"
    [event] = [e for e in span.events if e.name == "exception"]
    assert event.attributes is not None
    assert event.attributes["exception.type"] == "ValueError"
    assert event.attributes["exception.message"] == "no such recipient"
    # A sync handler, in a thread of its own, still makes its spans children of the attempt's.
    [child] = [s for s in spans.get_finished_spans() if s.name == "inside the sync handler"]
    assert child.parent is not None and span.context is not None
    assert child.parent.span_id == span.context.span_id


def test_a_job_enqueued_outside_any_span_gets_a_root_span(
    make_database: MakeDatabase, spans: InMemorySpanExporter
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("quiet", queue=QUEUE)
    async def quiet(ctx: AsyncContext, payload: Any) -> None:
        pass

    job_id = app.enqueue("quiet")
    app.close()
    assert stored_context(url, job_id) is None
    run_worker_until(app, finished(url, job_id))

    span = only_attempt_span(spans, job_id)
    assert span.parent is None
    assert list(span.links) == []
    assert span.attributes is not None and span.attributes["taskboard.job.outcome"] == "complete"


def test_every_form_of_enqueue_stores_the_callers_trace_context(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    with TRACER.start_as_current_span("sync") as span:
        expected = traceparent(span)
        ids = [app.enqueue("t"), *app.enqueue_many("t", [{}, {}])]
        with psycopg.connect(url) as conn:
            ids += [app.enqueue("t", conn=conn), *app.enqueue_many("t", [{}], conn=conn)]
    app.close()
    assert [stored_context(url, i)["traceparent"] for i in ids] == [expected] * len(ids)

    async def produce() -> tuple[str, list[int]]:
        with TRACER.start_as_current_span("async") as span:
            made = [await app.aenqueue("t"), *await app.aenqueue_many("t", [{}, {}])]
            async with await psycopg.AsyncConnection.connect(url) as conn:
                made += [
                    await app.aenqueue("t", conn=conn),
                    *await app.aenqueue_many("t", [{}], conn=conn),
                ]
        await app.aclose()
        return traceparent(span), made

    expected, ids = asyncio.run(produce())
    assert [stored_context(url, i)["traceparent"] for i in ids] == [expected] * len(ids)


def test_without_opentelemetry_nothing_is_traced_and_nothing_imported() -> None:
    # A fresh interpreter in which `import opentelemetry` fails, as without the extra.
    script = "\n".join(
        [
            "import sys",
            "sys.modules['opentelemetry'] = None",
            "import taskboard, taskboard.app, taskboard.worker",
            "from taskboard import tracing",
            "assert tracing.ENABLED is False",
            "assert tracing.current_context() is None",
            "with tracing.attempt_span(job_id=1, attempt=1, queue='q', task='t',"
            " trace_context={'traceparent': 'x'}) as span:",
            "    assert span is None",
            "tracing.set_outcome(span, 'complete')",
            "tracing.record_failure(span, 'boom', ValueError('boom'))",
            "loaded = [m for m in sys.modules if m.startswith('opentelemetry.')]",
            "assert not loaded, loaded",
        ]
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_with_the_api_and_no_provider_set_an_attempt_makes_no_span_until_one_is_set() -> None:
    # A fresh interpreter: the global tracer provider is set once per process.
    script = "\n".join(
        [
            "from opentelemetry import trace",
            "from opentelemetry.sdk.trace import TracerProvider",
            "from taskboard import tracing",
            "args = dict(job_id=1, attempt=1, queue='q', task='t', trace_context=None)",
            "with tracing.attempt_span(**args) as span:",
            "    assert span is None",
            "    assert not trace.get_current_span().get_span_context().is_valid",
            "trace.set_tracer_provider(TracerProvider())",
            "with tracing.attempt_span(**args) as span:",
            "    assert span is not None and span.is_recording()",
        ]
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
