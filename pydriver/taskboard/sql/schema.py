"""What the database's taskboard schema is and can do: one Schema, read at connect.

This driver works with the schema releases of two series, the current one and
the one before it: from OLDEST up to, not including, BEYOND. Any other schema,
or none, is refused with one line naming the fix (`taskboard migrate` for an
older one). Callers ask a Schema for a named feature, never for a release: the
release that brought each feature is written here, and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskboard.errors import SchemaVersionError
from taskboard.sql.parameters import release_of

OLDEST = (0, 6, 0)
BEYOND = (0, 8, 0)


def dotted(release: tuple[int, ...]) -> str:
    return ".".join(map(str, release))


SUPPORTED_SCHEMA_VERSIONS = (dotted(OLDEST), dotted(BEYOND))


def supported(version: str) -> bool:
    """Whether this driver works with schema release `version` (X.Y.Z)."""
    release = release_of(version)
    return release is not None and OLDEST <= release < BEYOND


@dataclass(frozen=True, slots=True)
class Schema:
    """A supported schema: its release, and what it can do. Every feature the driver
    uses is in every release of the range; one that a supported release lacks is
    named here, as a property answering from `release`."""

    version: str
    release: tuple[int, ...]


def schema_of(version: str | None) -> Schema:
    """The Schema of `version` (what taskboard.version() answers; None: no schema), or
    SchemaVersionError, one line naming the fix, when this driver cannot work with it."""
    if version is None:
        raise SchemaVersionError(
            "the database has no taskboard schema: run `taskboard migrate` first"
        )
    release = release_of(version)
    span = f"this driver supports {dotted(OLDEST)} up to (not including) {dotted(BEYOND)}"
    if release is None:
        raise SchemaVersionError(
            f"the database's taskboard.version() answers {version[:40]!r}, not a release X.Y.Z;"
            f" {span}: reinstall the schema with `taskboard migrate`"
        )
    if release >= BEYOND:
        raise SchemaVersionError(
            f"the database's taskboard schema is version {version}; {span}: "
            "upgrade the driver (pip install -U taskboard-pg)"
        )
    if release < OLDEST:
        raise SchemaVersionError(
            f"the database's taskboard schema is version {version}; {span}: run `taskboard migrate`"
        )
    return Schema(version, release)
