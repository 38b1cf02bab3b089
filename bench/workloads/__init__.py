"""The bench's workloads, one module each; bench/run.py runs them in turn.

Imported with bench/ on sys.path, as bench/run.py puts it.
"""
