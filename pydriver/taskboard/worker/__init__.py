"""The worker package: held claims, the executor, control, renewal, and the Worker wiring them.

Imports run one way inside it: outcomes (complete, fail, release) at the
bottom, then retry (the reconnect loop) and wire (the socket to handler
processes), held (the state machine), endings (what a handler's ending
becomes), transactional, executor, host (a claimer's handler processes),
scheduler and startup, control, renewal and handling (a handler process),
and worker on top.
"""

from __future__ import annotations

from taskboard.worker.held import Counters, State
from taskboard.worker.startup import SUPPORTED_SCHEMA_VERSIONS
from taskboard.worker.worker import Worker

__all__ = ["SUPPORTED_SCHEMA_VERSIONS", "Counters", "State", "Worker"]
