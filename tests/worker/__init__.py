"""The driver's worker in this process against a real database."""
