"""Taskboard: a PostgreSQL job queue whose leases are fenced by tokens.

Who holds a job is decided by PL/pgSQL functions in the ``taskboard``
schema; this package calls them, runs handlers and keeps leases alive.
"""

__version__ = "0.1.0"
