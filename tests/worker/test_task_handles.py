"""Task handles and payload models, on a real database with a real worker.

`@app.task` returns a TaskHandle: it calls the handler when called and
enqueues the task's jobs. A task whose payload is a pydantic model (the
handler's annotation, or `payload=`) validates payloads at enqueue, stores
the model's JSON, and hands its handler an instance; a stored payload the
model refuses fails its job at once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from typing import Any, Literal

import psycopg
import pydantic
import pytest

from taskboard import (
    AsyncContext,
    InvalidArgument,
    SyncContext,
    Task,
    Taskboard,
    TaskError,
    TaskHandle,
)
from tests.support.database import MakeDatabase
from tests.support.inprocess import finished, job, make_app, run_worker_until

APP_LOGGER = "taskboard.app"


class SignUp(pydantic.BaseModel):
    """A payload model: an address with an @, a plan, a positive number of seats."""

    email: str
    plan: Literal["free", "pro"] = "free"
    seats: int = pydantic.Field(default=1, ge=1)
    at: dt.datetime | None = None

    @pydantic.field_validator("email")
    @classmethod
    def has_an_at(cls, value: str) -> str:
        if "@" not in value:
            raise ValueError("value is not a valid email address")
        return value


class Other(pydantic.BaseModel):
    n: int


def job_count(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone()
    assert row is not None
    return int(row[0])


def warnings_about_unknown(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == APP_LOGGER
        and r.levelno == logging.WARNING
        and "does not register" in r.getMessage()
    ]


# -- the handle -------------------------------------------------------------------------


def test_handle_enqueues_with_the_tasks_name_queue_and_max_attempts(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    def mail(ctx: SyncContext, payload: Any) -> None:
        return None

    send = app.task("send_email", queue="mail", max_attempts=3)(mail)
    assert isinstance(send, TaskHandle)
    assert (send.name, send.queue, send.handler) == ("send_email", "mail", mail)
    assert isinstance(send.task, Task) and send.task is app.tasks["send_email"]

    async def async_ids() -> list[int]:
        one = await send.aenqueue({"to": "maya"})
        many = await send.aenqueue_many([{"n": 1}, {"n": 2}], priority=4)
        await app.aclose()
        return [one, *many]

    ids = [send.enqueue({"to": "maya"}), *send.enqueue_many([{"n": 1}]), *asyncio.run(async_ids())]
    rows = [job(url, i) for i in ids]
    assert {(r["task"], r["queue"], r["max_attempts"]) for r in rows} == {("send_email", "mail", 3)}
    assert [r["payload"] for r in rows] == [
        {"to": "maya"},
        {"n": 1},
        {"to": "maya"},
        {"n": 1},
        {"n": 2},
    ]
    assert [r["priority"] for r in rows[-2:]] == [4, 4]

    # The call's own options win, as with app.enqueue.
    own = job(
        url,
        send.enqueue({"to": "ana"}, queue="urgent", max_attempts=9, priority=2, dedupe_key="ana"),
    )
    assert (own["queue"], own["max_attempts"], own["priority"], own["dedupe_key"]) == (
        "urgent",
        9,
        2,
        "ana",
    )
    run_at = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    assert job(url, send.enqueue(run_at=run_at))["run_at"] == run_at

    # With conn, the job joins the caller's transaction.
    before = job_count(url)
    with psycopg.connect(url) as conn:
        send.enqueue({"to": "nobody"}, conn=conn)
        conn.rollback()
    assert job_count(url) == before
    app.close()


def test_the_handle_still_calls_its_handler() -> None:
    app = Taskboard()

    @app.task("add")
    def add(ctx: SyncContext, payload: dict[str, int]) -> int:
        """Add a and b."""
        return payload["a"] + payload["b"]

    @app.task("twice")
    async def twice(ctx: AsyncContext, payload: int) -> int:
        return payload * 2

    assert add(None, {"a": 2, "b": 3}) == 5  # type: ignore[arg-type]
    assert asyncio.run(twice(None, 21)) == 42  # type: ignore[arg-type]
    assert (add.__name__, add.__doc__) == ("add", "Add a and b.")
    assert app.tasks["twice"].is_async and not app.tasks["add"].is_async
    assert repr(twice) == "<TaskHandle 'twice' queue='default'>"


def test_stacked_tasks_register_the_handler_itself(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("outer", queue="q")
    @app.task("inner", queue="q")
    async def both(ctx: AsyncContext, payload: Any) -> str:
        return ctx.task

    assert app.tasks["outer"].handler is app.tasks["inner"].handler
    assert app.tasks["outer"].is_async, "the async handler, not the handle, is registered"
    ids = [app.enqueue("inner"), both.enqueue()]
    run_worker_until(app, finished(url, *ids))
    assert [job(url, i)["result"] for i in ids] == ["inner", "outer"]
    app.close()


def test_periodic_above_a_task_schedules_that_task(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.periodic("* * * * * *", payload={"email": "ops@example.com", "seats": 2})
    @app.task("tick", queue="clock")
    async def tick(ctx: AsyncContext, payload: SignUp) -> dict[str, Any]:
        return {"type": type(payload).__name__, "seats": payload.seats}

    assert isinstance(tick, TaskHandle), "periodic returns what it decorates"
    declared = app.schedules["tick"]
    assert (declared.task, declared.queue) == ("tick", "clock")

    def ran() -> bool:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT result FROM taskboard.jobs WHERE task = 'tick' AND state = 'succeeded'"
            ).fetchone()
        return row is not None and row[0] == {"type": "SignUp", "seats": 2}

    run_worker_until(app, ran)

    # The schedule's payload is validated by the task's model when declared.
    with pytest.raises(TaskError, match=r"periodic .* of task 'tock': field 'email': value is not"):
        app.periodic("0 * * * *", payload={"email": "nope"})(app.task("tock")(tick.handler))
    assert "tock" not in app.schedules
    app.close()


# -- payload models at enqueue ------------------------------------------------------------


def test_a_payload_the_model_refuses_raises_one_line_naming_the_field_and_enqueues_nothing(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("sign_up")
    async def sign_up(ctx: AsyncContext, payload: SignUp) -> None:
        return None

    assert app.tasks["sign_up"].payload_model is SignUp
    sign_up.enqueue({"email": "first@example.com"})
    before = job_count(url)

    refused: list[tuple[str, Any]] = [
        ("handle", lambda: sign_up.enqueue({"email": "maya"})),
        ("by name", lambda: app.enqueue("sign_up", {"email": "maya"})),
        ("many", lambda: sign_up.enqueue_many([{"email": "a@x"}, {"email": "maya"}])),
        ("async", lambda: asyncio.run(app.aenqueue("sign_up", {"email": "maya"}))),
        (
            "async many",
            lambda: asyncio.run(sign_up.aenqueue_many([{"email": "a@x"}, {"email": "b"}])),
        ),
    ]
    messages = {}
    for how, call in refused:
        with pytest.raises(InvalidArgument) as caught:
            call()
        messages[how] = str(caught.value)
    field = "field 'email': value is not a valid email address"
    assert messages == {
        "handle": f"payload of task 'sign_up': {field}",
        "by name": f"payload of task 'sign_up': {field}",
        "many": f"payloads[1] of task 'sign_up': {field}",
        "async": f"payload of task 'sign_up': {field}",
        "async many": f"payloads[1] of task 'sign_up': {field}",
    }

    with pytest.raises(InvalidArgument) as caught:
        sign_up.enqueue({"email": "x@y", "plan": "gold", "seats": 0})
    assert str(caught.value) == (
        "payload of task 'sign_up': field 'plan': Input should be 'free' or 'pro' (and 1 more)"
    )
    with pytest.raises(InvalidArgument, match=r"^payload of task 'sign_up': Input should be a"):
        sign_up.enqueue(Other(n=1))
    with pytest.raises(InvalidArgument, match=r"field 'email': Field required"):
        sign_up.enqueue()  # no payload is {}
    # An instance is validated again: a field assigned after it was made, model_construct.
    assigned = SignUp(email="a@x")
    assigned.seats = 0
    with pytest.raises(InvalidArgument, match=r"field 'seats': Input should be greater"):
        sign_up.enqueue(assigned)
    with pytest.raises(InvalidArgument, match=r"field 'email': value is not a valid email"):
        sign_up.enqueue(SignUp.model_construct(email="maya"))
    assert job_count(url) == before, "nothing was enqueued"
    app.close()


def test_the_stored_payload_is_the_models_json(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("sign_up")
    def sign_up(ctx: SyncContext, payload: SignUp) -> None:
        return None

    at = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    from_model = sign_up.enqueue(SignUp(email="maya@example.com", at=at))
    from_dict = app.enqueue("sign_up", {"email": "ana@example.com", "seats": "3"})
    assert job(url, from_model)["payload"] == {
        "email": "maya@example.com",
        "plan": "free",
        "seats": 1,
        "at": "2030-01-02T03:04:05Z",
    }
    assert job(url, from_dict)["payload"] == {
        "email": "ana@example.com",
        "plan": "free",
        "seats": 3,
        "at": None,
    }
    app.close()


# -- payload models in the worker -----------------------------------------------------------


def test_the_handler_receives_an_instance_of_its_model(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("annotated")
    async def annotated(ctx: AsyncContext, payload: SignUp) -> dict[str, Any]:
        return {
            "type": type(payload).__name__,
            "ctx": type(ctx.payload).__name__,
            "at": type(payload.at).__name__,
            "email": payload.email,
        }

    @app.task("declared", payload=SignUp)
    def declared(ctx: SyncContext, payload: Any) -> dict[str, Any]:
        return {"type": type(payload).__name__, "seats": payload.seats}

    @app.task("plain")
    def plain(ctx: SyncContext, payload: Any) -> str:
        return type(payload).__name__

    at = dt.datetime(2030, 1, 2, tzinfo=dt.UTC)
    ids = [
        annotated.enqueue(SignUp(email="maya@example.com", at=at)),
        declared.enqueue({"email": "ana@example.com", "seats": 2}),
        plain.enqueue({"email": "x"}),
    ]
    run_worker_until(app, finished(url, *ids))
    assert [(job(url, i)["state"], job(url, i)["result"]) for i in ids] == [
        (
            "succeeded",
            {"type": "SignUp", "ctx": "SignUp", "at": "datetime", "email": "maya@example.com"},
        ),
        ("succeeded", {"type": "SignUp", "seats": 2}),
        ("succeeded", "dict"),
    ]
    app.close()


def test_a_stored_payload_the_model_refuses_fails_its_job_without_retry(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    producer = make_app(url)  # registers nothing: validates nothing
    bad = producer.enqueue("sign_up", {"email": 5, "seats": 0}, max_attempts=5)
    good = producer.enqueue("sign_up", {"email": "maya@example.com"})
    producer.close()

    app = make_app(url)
    ran: list[str] = []

    @app.task("sign_up")
    async def sign_up(ctx: AsyncContext, payload: SignUp) -> None:
        ran.append(payload.email)

    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        run_worker_until(app, finished(url, bad, good))
    row = job(url, bad)
    assert (row["state"], row["attempt"], row["max_attempts"]) == ("dead", 1, 5)
    assert [e["error"] for e in row["errors"]] == [
        "PayloadInvalid: the payload does not validate as SignUp: "
        "field 'email': Input should be a valid string (and 1 more)"
    ]
    assert ran == ["maya@example.com"], "the handler never saw the refused payload"
    assert job(url, good)["state"] == "succeeded"
    assert any(f"job {bad}: PayloadInvalid" in r.getMessage() for r in caplog.records), (
        "the worker says why"
    )
    app.close()


# -- registration -------------------------------------------------------------------------------


def test_a_payload_option_that_is_not_a_model_or_disagrees_with_the_annotation_is_refused() -> None:
    app = Taskboard()

    def handler(ctx: SyncContext, payload: SignUp) -> None:
        return None

    with pytest.raises(TaskError, match=r"task 'a': payload must be a pydantic model"):
        app.task("a", payload=dict)(handler)  # type: ignore[arg-type]
    with pytest.raises(
        TaskError, match=r"payload=Other but the handler's payload is annotated SignUp"
    ):
        app.task("b", payload=Other)(handler)
    assert app.tasks == {}


def test_an_annotation_that_cannot_be_resolved_is_logged_and_payload_option_is_the_way(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Taskboard()

    class Local(pydantic.BaseModel):  # not a name of this module: the string cannot resolve
        n: int

    def handler(ctx: SyncContext, payload: Local) -> None:
        return None

    with caplog.at_level(logging.WARNING, logger="taskboard.tasks"):
        app.task("unresolved")(handler)
    assert app.tasks["unresolved"].payload_model is None
    [record] = [r for r in caplog.records if r.name == "taskboard.tasks"]
    assert "task 'unresolved': the annotation 'Local'" in record.getMessage()
    assert "pass payload=MODEL" in record.getMessage()

    assert app.task("declared", payload=Local)(handler).task.payload_model is Local


# -- enqueue of a task the app does not register -------------------------------------------------


def test_enqueue_of_a_task_the_app_does_not_register_warns_once_per_name(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("b")
    @app.task("a")
    def known(ctx: SyncContext, payload: Any) -> None:
        return None

    async def async_calls() -> None:
        await app.aenqueue("typo_task")
        await app.aenqueue_many("other_service", [{}])
        await app.aclose()

    with caplog.at_level(logging.WARNING, logger=APP_LOGGER):
        app.enqueue("typo_task")
        app.enqueue("typo_task", {"n": 2})
        app.enqueue_many("typo_task", [{}, {}])
        asyncio.run(async_calls())
        app.enqueue("a")
        known.enqueue()
    assert warnings_about_unknown(caplog) == [
        "enqueue of task 'typo_task', which this app does not register (registered: a, b): "
        "it runs only on a worker that does",
        "enqueue of task 'other_service', which this app does not register (registered: a, b): "
        "it runs only on a worker that does",
    ]
    assert job_count(url) == 8, "the jobs were enqueued all the same"

    caplog.clear()
    producer = make_app(url)
    with caplog.at_level(logging.WARNING, logger=APP_LOGGER):
        producer.enqueue("typo_task")
        producer.enqueue_many(f"job-{uuid.uuid4().hex}", [{}])
    assert warnings_about_unknown(caplog) == [], "an app that registers no task is a producer"
    assert job_count(url) == 10
    app.close()
    producer.close()
