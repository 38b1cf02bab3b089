"""Log formats for the ``taskboard`` command: readable text, or one JSON object a line.

TASKBOARD_LOG_FORMAT picks one: ``text`` (the default) or ``json``. A JSON
record carries the time, level, logger and message, the traceback when
there is one, and, for a record about a job, its job_id, attempt, queue and
task, so a log pipeline can follow one job across workers. This module
imports no other taskboard module.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys

FORMATS = ("text", "json")
ENV = "TASKBOARD_LOG_FORMAT"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# What a record about one job carries (the worker passes them as `extra`).
JOB_FIELDS = ("job_id", "attempt", "queue", "task")


class JsonFormatter(logging.Formatter):
    """One JSON object a record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in JOB_FIELDS:
            if field in record.__dict__:
                out[field] = record.__dict__[field]
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def log_format() -> str:
    """TASKBOARD_LOG_FORMAT, checked; ValueError naming it and the choices else."""
    value = os.environ.get(ENV, "text").strip().lower() or "text"
    if value not in FORMATS:
        raise ValueError(f"{ENV} must be text or json, got {os.environ.get(ENV)!r}")
    return value


def configure(level: str, fmt: str) -> None:
    """Send the taskboard command's records to stderr at `level`, in format `fmt`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
