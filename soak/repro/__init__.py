"""Small, deterministic reproductions of what the soak found, one script each.

Each runs on a throwaway PostgreSQL of its own and exits 1 while the
behaviour it shows is there, 0 once it is gone.
"""
