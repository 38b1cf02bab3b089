"""How a handler decides what happens after its attempt: retry policies, Retry, Abort, Snooze.

A task registered with a retry policy gets the delay before its next
attempt from it when its handler raises; without one the database decides
(`fail` with retry_in NULL: 2^attempt seconds +/- 25 %, capped at one
hour). A handler can also say so itself:

- `raise Retry(after=30)`: this attempt failed; the next one starts after
  30 s. It uses an attempt: with none left the job is dead.
- `raise Abort("card stolen")`: a non-retryable error; the job is dead at
  once, whatever attempts are left (`fail(..., retry => false)`).
- `ctx.snooze(60)`: hand the job back for 60 s without using an attempt
  (`release(..., delay)`). It raises Snooze, so the handler stops there.

Delays are float seconds within the database's bounds: fail's `retry_in`
must be positive and release's `delay` not negative, both at most 12 hours.
Anything else raises InvalidArgument naming the argument, before anything
is sent. This module imports no other taskboard module but errors.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from taskboard.errors import INVALID_PARAMETER_VALUE, InvalidArgument

# The bounds of fail's retry_in and release's delay (db/functions/fail.sql,
# release.sql): at most 12 hours, in seconds.
MAX_DELAY_SECONDS = 12 * 3600.0
ONE_MICROSECOND = dt.timedelta(microseconds=1)  # PostgreSQL's interval resolution


def delay_seconds(name: str, value: object, *, zero_allowed: bool) -> float:
    """`value` as float seconds when the database takes it as a delay; InvalidArgument else.

    With `zero_allowed` (release's delay) 0 is taken; without it (fail's
    retry_in) the delay must be at least one microsecond.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(
            f"{name} must be a number of seconds, got {value!r}", INVALID_PARAMETER_VALUE
        )
    seconds = float(value)
    if math.isnan(seconds) or not 0 <= seconds <= MAX_DELAY_SECONDS:
        raise InvalidArgument(
            f"{name} must be between 0 and {MAX_DELAY_SECONDS:g} seconds (12 hours), got {value!r}",
            INVALID_PARAMETER_VALUE,
        )
    if not zero_allowed and dt.timedelta(seconds=seconds) < ONE_MICROSECOND:
        raise InvalidArgument(
            f"{name} must be positive (at least one microsecond), got {value!r}",
            INVALID_PARAMETER_VALUE,
        )
    return seconds


@dataclass(frozen=True)
class ExponentialBackoff:
    """Exponential backoff: `base` seconds after attempt 1, doubling with each attempt,
    at most `cap`, each delay moved at random by up to +/- `jitter` (a fraction) before
    the cap applies.

    `ExponentialBackoff(base=5, cap=600, jitter=0.1)` waits about 5 s, 10 s, 20 s, ...,
    then 600 s. Raises InvalidArgument for a base that is not positive, a cap below
    base or above 12 hours, or a jitter outside [0, 1).
    """

    base: float = 1.0
    cap: float = 3600.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        delay_seconds("base", self.base, zero_allowed=False)
        delay_seconds("cap", self.cap, zero_allowed=False)
        if self.cap < self.base:
            raise InvalidArgument(
                f"cap must be at least base ({self.base!r}), got {self.cap!r}",
                INVALID_PARAMETER_VALUE,
            )
        if (
            isinstance(self.jitter, bool)
            or not isinstance(self.jitter, int | float)
            or not 0 <= self.jitter < 1
        ):
            raise InvalidArgument(
                f"jitter must be a fraction in [0, 1), got {self.jitter!r}",
                INVALID_PARAMETER_VALUE,
            )

    def __call__(self, attempt: int, exception: BaseException | None = None) -> float:
        """The delay in seconds after failed attempt `attempt` (1 for the first)."""
        doublings = min(max(attempt, 1) - 1, 64)  # 2^64 s is past any cap
        delay = self.base * 2.0**doublings
        if self.jitter:
            delay *= 1 + self.jitter * random.uniform(-1.0, 1.0)
        return max(min(delay, self.cap), ONE_MICROSECOND.total_seconds())


# A retry policy: ExponentialBackoff, or any callable (attempt, exception) -> seconds
# (None: the database's backoff).
RetryPolicy = Callable[[int, BaseException], float | None]


def retry_policy(name: str, policy: object) -> RetryPolicy | None:
    """`policy` when it is usable as a task's retry policy; InvalidArgument naming `name` else."""
    if policy is None or (callable(policy) and not isinstance(policy, type)):
        return policy  # a callable's signature is checked when it is called
    raise InvalidArgument(
        f"{name} must be an ExponentialBackoff or a callable (attempt, exception) -> seconds, "
        f"got {policy!r}",
        INVALID_PARAMETER_VALUE,
    )


class Retry(Exception):
    """Raise in a handler: this attempt failed; retry after `after` seconds.

    It uses an attempt: with none left the job is dead. `after=None` leaves
    the delay to the task's retry policy, else to the database. `reason` is
    recorded as the attempt's error. Raises InvalidArgument for an `after`
    that is not positive or longer than 12 hours.
    """

    def __init__(self, reason: str | None = None, *, after: float | None = None) -> None:
        self.after = None if after is None else delay_seconds("after", after, zero_allowed=False)
        if reason is None:
            reason = "retry requested" if after is None else f"retry requested after {after:g}s"
        self.reason = reason
        super().__init__(reason)


class Abort(Exception):
    """Raise in a handler: a non-retryable error; the job is dead at once.

    `reason` is recorded as the attempt's error, with the traceback.
    """

    def __init__(self, reason: str = "aborted") -> None:
        self.reason = reason
        super().__init__(reason)


class Snooze(BaseException):
    """Raised by `ctx.snooze(seconds)`: the worker hands the job back for `seconds`.

    No attempt is used. A BaseException, like SystemExit, so that an
    `except Exception` in the handler does not swallow it; a handler that
    catches BaseException must raise it again.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = delay_seconds("seconds", seconds, zero_allowed=True)
        super().__init__(f"snoozed for {self.seconds:g}s")
