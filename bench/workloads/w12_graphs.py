"""W12 big graphs (Taskboard only, once a bench, after the runs): what one call costs on
a dependency graph far wider or deeper than W11's, over TCP loopback (127.0.0.1, as an
application connects; the bench's server listens there only when W12 runs), against the
5 s bar (the dashboard's statement timeout) and the red team's figures for 0.5.0:

- enqueue of one job naming FAN_IN dependencies (10,000 is depends_on's cap), timed
  around the one `enqueue` call;
- complete of a running job with FAN_OUT dependents: the completion's own time (it settles
  at most SETTLE_BATCH edges itself), then the rest: later claims of any queue settle
  SETTLE_BATCH edges each through taskboard.recheck_dependencies. One connection claims an
  empty queue in a loop until `NOT EXISTS (SELECT FROM taskboard.dependency_checks)`: how
  long that took, how many claims, and their latency p50 and max while the backlog lasted;
- cancel of such a running job, by the superuser (an admin), then its backlog the same way;
- cancel of the head of a CHAIN-link chain (each job waiting on the one before), the same.

Each complete and cancel runs under the dashboard's statement_timeout (BAR_S): a call it
cuts is rolled back, reported as timed out and, below MILLION dependents, made again
without the timeout (timed too) before its backlog is settled and checked.

The graphs are built by the superuser with INSERT ... SELECT generate_series, not the API
(as W3 grows its table): the dependents `waiting` with one dependency left and their edges
written, as enqueue leaves them once its check has been made; only the job they depend on
goes in by `enqueue` and, for complete, is claimed. VACUUM ANALYZE and a CHECKPOINT before
each timed call. 1,000,000 dependents take a minute or more to build: only with
--w12-million.

What must hold, or RuntimeError: the enqueued job is waiting with every dependency left;
after each backlog every dependent is queued (complete) or cancelled (cancel) and no edge
is left."""

from __future__ import annotations

import statistics
import time
from typing import Any

from measure import OURS, Bench, log
from report import Line
from systems import TASK

FAN_IN = (1_000, 10_000)  # dependencies of one enqueued job; 10,000 is the cap
FAN_OUT = (10_000, 100_000)  # dependents of a completed or cancelled job
MILLION = 1_000_000  # one more FAN_OUT size, with --w12-million
CHAIN = 10_000  # links of the chain whose head is cancelled
SETTLE_BATCH = 1_000  # edges one settle_dependents call removes (db/deploy/settle_dependents.sql)
BAR_S = 5.0  # the dashboard's statement_timeout: no operator action or completion takes longer
BACKLOG_TIMEOUT_S = 1_800.0
TIMED_OUT = "timed out (statement_timeout, rolled back)"
UNTIMED = "again without the statement timeout"
HEAD_QUEUE, DEPS_QUEUE, EMPTY_QUEUE = "w12-head", "w12-deps", "w12-empty"
# The red team's figures on 0.5.0 (issue 38), in seconds; None: answered 503 (timed out).
RED_TEAM = {
    "enqueue naming 100,000 dependencies": 7.0,
    "complete of a job with 1,000,000 dependents": 15.0,
    "cancel of a job with 1,000,000 dependents": None,
    f"cancel of the head of a {CHAIN:,}-link chain": 5.0,
}


async def graphs(bench: Bench, million: bool = False) -> None:
    """W12: each case in a fresh database."""
    for n in FAN_IN:
        await fan_in(bench, n)
    for n in (*FAN_OUT, *((MILLION,) if million else ())):
        await fan_out(bench, n, "complete")
        await fan_out(bench, n, "cancel")
    await fan_out(bench, CHAIN, "cancel", chain=True)


def fresh(bench: Bench) -> str:
    return bench.fresh(OURS, "w12", "tcp")


def settle_ready(conn: Any) -> None:
    """VACUUM ANALYZE (the statistics and visibility map of a table at rest) and a
    CHECKPOINT before the timed call."""
    conn.execute("VACUUM ANALYZE taskboard.jobs")
    conn.execute("VACUUM ANALYZE taskboard.job_dependencies")
    conn.execute("CHECKPOINT")


def insert_jobs(conn: Any, n: int, state: str, queue: str, left: int | None) -> None:
    conn.execute(
        """
        INSERT INTO taskboard.jobs (queue, task, state, run_at, max_attempts,
                                    dependencies_left, on_dependency_failure)
        SELECT %(queue)s, %(task)s, %(state)s, clock_timestamp(), 5, %(left)s,
               CASE WHEN %(left)s::integer IS NULL THEN NULL ELSE 'cancel' END
          FROM generate_series(1, %(n)s)
        """,
        {"queue": queue, "task": TASK, "state": state, "left": left, "n": n},
    )


async def fan_in(bench: Bench, n: int) -> None:
    import psycopg

    url = fresh(bench)
    what = f"enqueue naming {n:,} dependencies"
    with psycopg.connect(url, autocommit=True) as conn:
        built = time.perf_counter()
        insert_jobs(conn, n, "queued", DEPS_QUEUE, None)
        ids = [r[0] for r in conn.execute("SELECT id FROM taskboard.jobs ORDER BY id")]
        settle_ready(conn)
        built_s = time.perf_counter() - built
        called = time.perf_counter()
        row = conn.execute(
            "SELECT taskboard.enqueue(%s, '{}', %s, depends_on => %s::bigint[])",
            (TASK, HEAD_QUEUE, ids),
        ).fetchone()
        seconds = time.perf_counter() - called
        assert row is not None
        state = conn.execute(
            "SELECT state, dependencies_left FROM taskboard.jobs WHERE id = %s", (row[0],)
        ).fetchone()
        backlog = drain_backlog(conn)
    if state != ("waiting", n):
        raise RuntimeError(f"W12 {what}: the job is {state} after its enqueue")
    add(bench, what, seconds, built_s, backlog)


async def fan_out(bench: Bench, n: int, action: str, chain: bool = False) -> None:
    import psycopg

    url = fresh(bench)
    what = (
        f"cancel of the head of a {n:,}-link chain"
        if chain
        else f"{action} of a job with {n:,} dependents"
    )
    log(f"W12 {what}: building the graph")
    with psycopg.connect(url, autocommit=True) as conn:
        built = time.perf_counter()
        head_row = conn.execute(
            "SELECT taskboard.enqueue(%s, '{}', %s)", (TASK, HEAD_QUEUE)
        ).fetchone()
        assert head_row is not None
        head = head_row[0]
        insert_jobs(conn, n, "waiting", DEPS_QUEUE, 1)
        if chain:  # each job waits on the one before it, the first on the head
            conn.execute(
                """
                INSERT INTO taskboard.job_dependencies (job_id, depends_on)
                SELECT id, coalesce(lag(id) OVER (ORDER BY id), %s)
                  FROM taskboard.jobs WHERE queue = %s
                """,
                (head, DEPS_QUEUE),
            )
        else:
            conn.execute(
                """
                INSERT INTO taskboard.job_dependencies (job_id, depends_on)
                SELECT id, %s FROM taskboard.jobs WHERE queue = %s
                """,
                (head, DEPS_QUEUE),
            )
        conn.execute(
            """
            UPDATE taskboard.jobs SET has_dependents = true
             WHERE id IN (SELECT depends_on FROM taskboard.job_dependencies)
            """
        )
        claimed = conn.execute(
            "SELECT job_id, token FROM taskboard.claim(%s, 'w12', 1, '1 hour')", (HEAD_QUEUE,)
        ).fetchone()
        if claimed is None or claimed[0] != head:
            raise RuntimeError(f"W12 {what}: the head was not claimed: {claimed}")
        settle_ready(conn)
        built_s = time.perf_counter() - built
        log(f"W12 {what}: built in {built_s:.1f} s")
        # The dashboard's statement timeout, on the call timed only.
        conn.execute(f"SET statement_timeout = '{BAR_S:g}s'")
        called = time.perf_counter()
        timed_out = False
        try:
            call(conn, action, head, claimed)
        except psycopg.errors.QueryCanceled:
            timed_out = True
        seconds = time.perf_counter() - called
        conn.execute("RESET statement_timeout")
        untimed_s: float | None = None
        if timed_out:
            log(f"W12 {what}: timed out after {seconds:.1f} s (statement_timeout {BAR_S:g} s)")
            if n < MILLION:  # the same call again, without the timeout: how long it takes
                called = time.perf_counter()
                call(conn, action, head, claimed)
                untimed_s = time.perf_counter() - called
                log(f"W12 {what}: {untimed_s:.1f} s without the statement timeout")
        backlog = drain_backlog(conn)
        expected = "queued" if action == "complete" else "cancelled"
        states = dict(
            conn.execute(
                "SELECT state, count(*) FROM taskboard.jobs WHERE queue = %s GROUP BY state",
                (DEPS_QUEUE,),
            ).fetchall()
        )
        edges = conn.execute("SELECT count(*) FROM taskboard.job_dependencies").fetchone()
    if (not timed_out or untimed_s is not None) and (states != {expected: n} or edges != (0,)):
        raise RuntimeError(
            f"W12 {what}: after the backlog the dependents are {states}, {edges} edges left; "
            f"expected all {n:,} {expected} and none left"
        )
    add(
        bench,
        what,
        None if timed_out else seconds,
        built_s,
        backlog,
        timed_out_s=seconds,
        untimed_s=untimed_s,
    )


def call(conn: Any, action: str, head: int, claimed: tuple[Any, ...]) -> None:
    if action == "complete":
        conn.execute("SELECT taskboard.complete(%s, %s)", claimed)
    else:
        conn.execute("SELECT taskboard.cancel(%s)", (head,))


def drain_backlog(conn: Any) -> dict[str, Any]:
    """Claim EMPTY_QUEUE on `conn` until taskboard.dependency_checks is empty: how long that
    took, how many claims, and each claim's latency."""
    started = time.perf_counter()
    deadline = time.monotonic() + BACKLOG_TIMEOUT_S
    latencies: list[float] = []
    while True:
        row = conn.execute("SELECT NOT EXISTS (SELECT FROM taskboard.dependency_checks)").fetchone()
        if row == (True,):
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"W12: dependency checks left after {BACKLOG_TIMEOUT_S:g} s")
        called = time.perf_counter()
        conn.execute("SELECT count(*) FROM taskboard.claim(%s, 'w12', 1)", (EMPTY_QUEUE,))
        latencies.append((time.perf_counter() - called) * 1000)
    return {"seconds": time.perf_counter() - started, "claims_ms": latencies}


def add(
    bench: Bench,
    what: str,
    seconds: float | None,
    built_s: float,
    backlog: dict[str, Any],
    timed_out_s: float = 0.0,
    untimed_s: float | None = None,
) -> None:
    """The lines of one case: the call (`seconds` None: it timed out after `timed_out_s`),
    then its backlog."""
    claims = backlog["claims_ms"]
    bench.samples.add(Line("W12", what, "ms", False), OURS, (seconds or timed_out_s) * 1000)
    if seconds is None:  # rolled back: nothing was settled, and nothing is left
        bench.samples.add(Line("W12", f"{what}: {TIMED_OUT}", "calls", False), OURS, 1)
    if untimed_s is not None:  # the same call again without the timeout (then the rest)
        bench.samples.add(Line("W12", f"{what}: {UNTIMED}", "ms", False), OURS, untimed_s * 1000)
    if claims:
        bench.samples.add(
            Line("W12", f"{what}: the rest, by later claims", "s", False),
            OURS,
            backlog["seconds"],
        )
        bench.samples.add(
            Line("W12", f"{what}: claims to settle the rest", "claims", False), OURS, len(claims)
        )
        bench.samples.add(
            Line("W12", f"{what}: a claim p50 while the rest lasts", "ms", False),
            OURS,
            statistics.median(claims),
        )
        bench.samples.add(
            Line("W12", f"{what}: a claim max while the rest lasts", "ms", False),
            OURS,
            max(claims),
        )
    bench.record(
        {
            "workload": "W12",
            "case": what,
            "seconds": seconds,
            "timed_out": seconds is None,
            "timed_out_s": timed_out_s if seconds is None else None,
            "without_timeout_s": untimed_s,
            "built_s": built_s,
            "backlog_s": backlog["seconds"],
            "backlog_claims": len(claims),
            "backlog_claim_ms": claims,
        }
    )
    call = f"{seconds * 1000:,.1f} ms" if seconds is not None else f"TIMED OUT ({BAR_S:g} s)"
    rest = (
        f"; the rest {backlog['seconds']:.1f} s by {len(claims):,} claims, p50 "
        f"{statistics.median(claims):.1f} ms, max {max(claims):.1f} ms"
        if claims
        else "; nothing left"
    )
    log(f"W12 {what}: {call}{rest} (graph built in {built_s:.1f} s)")


def verdicts(medians: dict[str, float]) -> list[str]:
    """The target lines: each call against the 5 s bar, and the red team's figure."""

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    out = []
    cases = [f"enqueue naming {n:,} dependencies" for n in FAN_IN]
    cases += [
        f"{action} of a job with {n:,} dependents"
        for n in (*FAN_OUT, MILLION)
        for action in ("complete", "cancel")
    ]
    cases.append(f"cancel of the head of a {CHAIN:,}-link chain")
    for case in cases:
        ms = medians.get(case)
        rest = medians.get(f"{case}: the rest, by later claims")
        red = RED_TEAM.get(case, "none")
        before = (
            ""
            if red == "none"
            else "; 0.5.0: answered 503 (5 s statement timeout)"
            if red is None
            else f"; 0.5.0: {red:g} s"
        )
        if ms is None:
            continue
        extra = ""
        if rest is not None:
            p50 = medians.get(f"{case}: a claim p50 while the rest lasts", 0.0)
            peak = medians.get(f"{case}: a claim max while the rest lasts", 0.0)
            count = medians.get(f"{case}: claims to settle the rest", 0.0)
            extra = (
                f"; the rest {rest:.1f} s by {count:,.0f} claims (p50 {p50:.1f} ms, max "
                f"{peak:.1f} ms: {verdict(peak <= BAR_S * 1000)})"
            )
        if f"{case}: {TIMED_OUT}" in medians:
            again = medians.get(f"{case}: {UNTIMED}")
            out.append(
                f"W12: {case}: TIMED OUT after {ms:,.0f} ms, rolled back (bar {BAR_S:g} s: "
                f"NOT met)"
                + ("" if again is None else f"; {again:,.0f} ms without the timeout")
                + f"{extra}{before}"
            )
            continue
        out.append(
            f"W12: {case}: {ms:,.1f} ms (bar {BAR_S:g} s: {verdict(ms <= BAR_S * 1000)})"
            f"{extra}{before}"
        )
    return out
