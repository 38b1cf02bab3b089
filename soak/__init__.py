"""The fault-injection soak: real workers, a real PostgreSQL, random faults.

``python -m soak`` (or ``make soak``) starts a throwaway PostgreSQL, deploys
Taskboard with Sqitch, runs producer and worker processes while it injects
faults, then checks invariants over a history the workers and producers
wrote outside the queue (fsynced JSON lines) and the final database. See
soak/README.md for what is checked and from which source.
"""
