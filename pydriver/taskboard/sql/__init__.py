"""The SQL calls: the only package with SQL text, and it calls taskboard.* functions only.

Every decision about who holds a job is made by those functions; these
wrappers pass arguments and return their answers unchanged. One module an
audience: parameters (the checks of the arguments), session (the schema's
release, the login's roles), producer, worker (`Queries`, the object a
worker makes its calls through), admin (queue control, managing jobs,
prune) and dashboard (the reads). Callers import the module they call by name
(`from taskboard.sql import producer`); this package re-exports nothing.

A call made on both a psycopg.Connection and a psycopg.AsyncConnection is
written once, for asyncio, in X_async.py (`aenqueue`, `apause`, ...); X.py
holds its sync twin (`enqueue`, `pause`, ...), generated from it by
`make sync` (dev/taskboard_dev/async_to_sync.py).
"""
