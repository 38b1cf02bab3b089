"""Registered tasks: a handler, its queue, how to run it, and the model of its payload."""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic
import pydantic_core

from taskboard.errors import INVALID_PARAMETER_VALUE, InvalidArgument, TaskError, one_line
from taskboard.retries import RetryPolicy

DEFAULT_QUEUE = "default"
DEFAULT_MAX_ATTEMPTS = 5

Handler = Callable[..., Any]
PayloadModel = type[pydantic.BaseModel]

log = logging.getLogger(__name__)


class PayloadInvalid(ValueError):
    """A stored payload that the task's model refuses; the message is one line naming the field."""


@dataclass(frozen=True)
class Task:
    """A registered handler and how to run it.

    `max_attempts` is what enqueue uses for the task's jobs when the caller
    gives none (None: DEFAULT_MAX_ATTEMPTS). `retry` gives the delay before
    the next attempt after the handler raised (None: the database's backoff).
    With `payload_model` (a pydantic model), a payload is validated by it at
    enqueue and stored as its JSON, and the handler receives an instance.
    """

    name: str
    handler: Handler
    queue: str
    timeout: float | None
    transactional: bool
    max_attempts: int | None = None
    retry: RetryPolicy | None = None
    payload_model: PayloadModel | None = None

    @functools.cached_property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.handler)

    def stored_payload(self, payload: Any, what: str = "payload") -> Any:
        """What to store for `payload` (`what` names it in errors): the model's JSON form.

        Without a model, `payload` itself. With one, an instance of the model
        or anything it validates (a dict, JSON-able values) becomes
        `model_dump(mode="json")`; InvalidArgument, one line naming `what`,
        the task and the field, when it does not validate.
        """
        model = self.payload_model
        if model is None:
            return payload
        try:
            if isinstance(payload, model):
                # An instance is checked again: fields assigned after it was made, or
                # model_construct, were never validated.
                payload = payload.model_dump(mode="json", warnings=False)
            stored = model.model_validate({} if payload is None else payload).model_dump(
                mode="json"
            )
            model.model_validate_json(json.dumps(stored))  # what the worker will validate
        except pydantic.ValidationError as exc:
            raise InvalidArgument(
                f"{what} of task {self.name!r}: {validation_problem(exc)}", INVALID_PARAMETER_VALUE
            ) from None
        except pydantic_core.PydanticSerializationError as exc:
            raise InvalidArgument(
                f"{what} of task {self.name!r}: cannot be stored as JSON: {one_line(str(exc))}",
                INVALID_PARAMETER_VALUE,
            ) from None
        return stored

    def handler_payload(self, stored: Any) -> Any:
        """The payload the handler receives for the decoded JSON `stored`: a model instance
        when the task has a model (validated as JSON), else `stored` itself.

        Raises PayloadInvalid when the model refuses it.
        """
        model = self.payload_model
        if model is None:
            return stored
        try:
            return model.model_validate_json(json.dumps(stored))
        except pydantic.ValidationError as exc:
            raise PayloadInvalid(
                f"the payload does not validate as {model.__qualname__}: {validation_problem(exc)}"
            ) from None


def validation_problem(exc: pydantic.ValidationError) -> str:
    """The first problem pydantic found, on one line: `field 'a.b': what is wrong`.

    The input value is left out (a payload may carry personal data); more
    problems are counted, not listed.
    """
    problems = exc.errors(include_url=False, include_input=False)
    if not problems:
        return one_line(str(exc))
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    # A validator's own ValueError says what is wrong without pydantic's "Value error, ".
    raised = first.get("ctx", {}).get("error") if first["type"] == "value_error" else None
    what = str(raised) if isinstance(raised, ValueError) else str(first["msg"])
    text = f"field {where!r}: {what}" if where else what
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more)"
    return one_line(text)


def payload_model(name: str, handler: Handler, declared: Any) -> PayloadModel | None:
    """The model that validates task `name`'s payloads: `declared`, else the handler's
    annotation of its payload (second) parameter when that is a pydantic model, else None.

    The annotation is resolved in the handler's module when it is a string
    (`from __future__ import annotations`); one that cannot be resolved
    there (a name imported under TYPE_CHECKING, a class defined inside a
    function) is logged and ignored: pass the model as `payload=`. Raises
    TaskError when `declared` is not a pydantic model, or when the
    annotation names another model.
    """
    if declared is not None and not _is_model(declared):
        raise TaskError(
            f"task {name!r}: payload must be a pydantic model (a BaseModel subclass), "
            f"got {declared!r}"
        )
    annotated = _annotated_model(name, handler)
    if declared is not None and annotated is not None and not issubclass(declared, annotated):
        raise TaskError(
            f"task {name!r}: payload={declared.__qualname__} but the handler's payload is "
            f"annotated {annotated.__qualname__}"
        )
    model: PayloadModel | None = declared if declared is not None else annotated
    return model


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, pydantic.BaseModel)


def _annotated_model(name: str, handler: Handler) -> PayloadModel | None:
    """The pydantic model the handler's payload parameter is annotated with, if any."""
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):  # a callable whose signature cannot be read
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) < 2 or parameters[1].kind not in positional:
        return None
    annotation = parameters[1].annotation
    if isinstance(annotation, str):
        namespace = getattr(inspect.unwrap(handler), "__globals__", {})
        try:
            # As typing.get_type_hints resolves it, for this one parameter only.
            annotation = eval(annotation, dict(namespace))
        except Exception as exc:  # noqa: BLE001 - any failure means "cannot be resolved here"
            log.warning(
                "task %r: the annotation %r of the handler's payload cannot be resolved in "
                "its module (%s: %s): the handler gets the decoded JSON; pass payload=MODEL "
                "to @app.task to validate it with a model",
                name,
                parameters[1].annotation,
                type(exc).__name__,
                exc,
            )
            return None
    return annotation if _is_model(annotation) else None


def worker_queues(tasks: Mapping[str, Task], configured: Sequence[str]) -> list[str]:
    """The queues a worker claims from: `configured`, else every task's queue, else default."""
    if configured:
        return list(dict.fromkeys(configured))
    return sorted({t.queue for t in tasks.values()}) or [DEFAULT_QUEUE]
