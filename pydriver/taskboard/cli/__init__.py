"""The ``taskboard`` command (``main``), one module a command group.

- command: ``build_parser`` and ``main``;
- schema (migrate, sql), running (worker, metrics, dashboard), jobs
  (enqueue, jobs, job, cancel, retry, prune), queues (status, pause, resume,
  limit, key-limit, rate-limit) and schedules: each group's commands and
  its part of the parser;
- common: what the groups share (exit statuses, COMMAND_NEEDS, CliError,
  the connection, the parser class, argument types).

Each imports only those below it (the import contracts in pyproject.toml).
"""

from __future__ import annotations

from taskboard.cli.command import build_parser, main
from taskboard.cli.common import COMMAND_NEEDS

__all__ = ["COMMAND_NEEDS", "build_parser", "main"]
