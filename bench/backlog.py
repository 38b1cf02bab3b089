"""W8's table: a retry backlog, and the dashboard's pages and the exporter timed on it.

The backlog is what issue 25's red team built: `unfinished` jobs queued for their next
attempt over 4 queues, each with 5 errors from attempts that failed hours ago (none within
the overview's hour), and `big` finished jobs, the newest, each carrying a payload and a
result of `big_bytes` / 2 bytes of JSON (the first page of the job list shows them).

A real `taskboard dashboard` process serves it (bench/dashboard.py's harness); each page
is fetched `requests` times after one warm-up fetch. Targets: the overview and the job
list answer within TARGET_MS.

Also runnable alone against any Taskboard database (it adds the rows; use a throwaway one):
    .venv/bin/python bench/backlog.py URL [UNFINISHED [BIG [BIG_BYTES]]]
"""

from __future__ import annotations

import statistics
import sys
import time

TARGET_MS = 200.0  # the overview and the job list on the backlog (issue 25)
TARGETED = ("overview", "jobs")
ERRORS_A_JOB = 5
REQUESTS = 10

# Jobs queued for their next attempt: attempt 5 of 10, due now or within the hour, each
# with ERRORS_A_JOB errors from attempts 2 to 6 hours ago.
UNFINISHED = """
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, attempt, max_attempts,
                            created_at, started_at, errors)
SELECT 'q' || (g %% 4), 'sync', pg_catalog.jsonb_build_object('n', g), 'queued',
       now() + (g %% 3600) * interval '1 second', 5, 10,
       now() - interval '1 day', now() - interval '2 hours',
       (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'error', 'ConnectionError: upstream refused the connection (attempt '
                            || a || ')',
                   'attempt', a, 'worker', 'bench-worker-' || (g %% 16),
                   'at', now() - interval '6 hours' + a * interval '45 minutes'))
          FROM pg_catalog.generate_series(1, %(errors)s) AS a)
  FROM pg_catalog.generate_series(1, %(rows)s::bigint) AS g
"""

# Finished jobs each with a payload and a result of about %(half)s bytes (hex text, which
# compresses as real data does, about 2:1).
BIG = """
INSERT INTO taskboard.jobs (queue, task, payload, state, run_at, attempt, max_attempts,
                            created_at, started_at, finished_at, result, errors)
SELECT 'q' || (g %% 4), 'report', pg_catalog.jsonb_build_object('blob', b.text), 'succeeded',
       now() - interval '10 minutes', 1, 3, now() - interval '10 minutes',
       now() - interval '9 minutes', now() - interval '8 minutes',
       pg_catalog.jsonb_build_object('blob', b.text), '[]'::jsonb
  FROM pg_catalog.generate_series(1, %(rows)s) AS g,
       LATERAL (SELECT pg_catalog.string_agg(pg_catalog.md5((g * 1000000 + i)::text), '')
                  FROM pg_catalog.generate_series(1, %(half)s / 32) AS i) AS b(text)
"""


def build(url: str, unfinished: int, big: int, big_bytes: int) -> dict[str, float]:
    """Add the backlog to the Taskboard database at `url`, then VACUUM ANALYZE it."""
    import psycopg

    took: dict[str, float] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(UNFINISHED, {"rows": unfinished, "errors": ERRORS_A_JOB})
        if big:
            conn.execute(BIG, {"rows": big, "half": big_bytes // 2})
        took["insert_s"] = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("VACUUM ANALYZE taskboard.jobs")
        took["vacuum_analyze_s"] = time.perf_counter() - started
    return took


def pages() -> dict[str, str]:
    return {"overview": "/", "jobs": "/jobs", "metrics": "/metrics"}


def measure(url: str, requests: int = REQUESTS) -> dict[str, list[float]]:
    """Each page's fetch times in ms, by page name."""
    import dashboard

    return dict(dashboard.measure(url, 0, requests, pages()))


def verdicts(got: dict[str, list[float]]) -> list[str]:
    """Each page's median, and for the targeted ones whether it met TARGET_MS."""
    out = []
    for page, times in got.items():
        p50 = statistics.median(times)
        if page in TARGETED:
            ok = "met" if p50 <= TARGET_MS else "NOT met"
            out.append(f"{page} p50 {p50:.1f} ms (target {TARGET_MS:.0f} ms: {ok})")
        else:
            out.append(f"{page} p50 {p50:.1f} ms")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    url = argv[0]
    unfinished = int(argv[1]) if len(argv) > 1 else 600_000
    big = int(argv[2]) if len(argv) > 2 else 60
    big_bytes = int(argv[3]) if len(argv) > 3 else 4 * 2**20
    took = build(url, unfinished, big, big_bytes)
    print(f"built in {took['insert_s']:.1f} s + VACUUM ANALYZE {took['vacuum_analyze_s']:.1f} s")
    for line in verdicts(measure(url)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    sys.exit(main(sys.argv[1:]))
