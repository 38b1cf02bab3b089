"""Pure logic: no PostgreSQL, no processes."""
