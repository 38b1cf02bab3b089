"""The soak's report, in Markdown: faults, invariants, throughput, duplicates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from soak.check import EXAMPLES, Result
from soak.plan import PLAIN_QUEUES, Config

HIT = (
    "A claim is *hit* when the fault happened while its worker held it (from the claim's send "
    "until its complete/fail/release answer, its loss, or its worker's exit); for pause, when it "
    "was held across a confirmed pause of its queue; for retry, the claims of retried jobs since "
    "their retry. Cancels, pauses, limits and retries are made through the driver's management "
    "API (app.cancel, app.pause, app.resume, app.set_queue_limit, app.retry) as the admin role. "
    "For pool-hold and long-handler, *injected* counts the claims of such jobs (retries included)."
)
WHY_DUPLICATES = (
    "Why duplicates exist: the fence stops at the database. A worker that is "
    "killed, stopped past its lease or cut off from the server may already have "
    "performed its external effect (written its 'sent' line) when the lease "
    "runs out; the job is then claimed again under a new token and the effect "
    "happens again. The database refuses the stale worker's complete, so the "
    "job succeeds exactly once, and the ledger rows written in the completing "
    "transaction stay exactly one per job; an external system can only "
    "deduplicate by the job's idempotency key, which every attempt shares."
)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _group_line(label: str, g: dict[str, Any]) -> str:
    pools = "/".join(str(p) for p in sorted(g["pool_size"]))
    slots = "/".join(str(n) for n in sorted(g["slots"])) or "?"
    handler_conns = "/".join(str(p - 2) for p in sorted(g["pool_size"]))
    hit = ", ".join(f"{kind} {g['faults'].get(kind, 0)}" for kind in ("kill", "stop", "terminate"))
    processes = f"{g['processes']} process{'es' if g['processes'] != 1 else ''}"
    return (
        f"{label} ({processes}; faults on them: {hit}): at most **{g['peak']} handlers running "
        f"at once** with {slots} slots and {handler_conns} handler connections; at most "
        f"**{g['conns']} server connections** (pool_size {pools})"
    )


def _concurrency_lines(s: dict[str, Any]) -> list[str]:
    """What each group of workers ran at once and held, against its pool."""
    groups = s.get("groups", {})
    if not groups:
        return []
    parts = []
    if "plain" in groups:
        parts.append(_group_line("plain-only workers", groups["plain"]))
    if "all" in groups:
        parts.append(_group_line("workers with every task", groups["all"]))
    return [
        "- concurrency beyond connections: "
        + "; ".join(parts)
        + f" (connections sampled {s['conn_samples']} times in pg_stat_activity)"
    ]


def render(
    result: Result,
    *,
    config: Config,
    seed: int,
    total_seconds: float | None,
    server: str,
    run_dir: Path,
) -> str:
    s = result.stats
    again = (
        f"make soak SOAK_SEED={seed} SOAK_JOBS={config.jobs} SOAK_SECONDS={config.seconds:g} "
        f"SOAK_WORKERS={config.workers}" + (" SOAK_QUICK=1" if config.quick else "")
    )
    setup = (
        f"- {config.jobs} requests ({s['jobs']} jobs after dedupe) from {config.producers} producers; "
        f"{config.workers} worker processes of {config.pool_size - 2} handler slots"
        + (
            f" and {config.plain_workers} plain-only (queues {', '.join(PLAIN_QUEUES)}: pool_size "
            f"{config.plain_pool_size}, concurrency {config.plain_concurrency})"
            if config.plain_workers
            else ""
        )
        + f"; lease {config.lease:g} s, renewal every {config.renew_every:g} s"
    )
    lines = [
        "# Taskboard soak report",
        "",
        f"- seed **{seed}** (`{again}`)",
        setup,
        f"- {server}; fault phase {config.seconds:g} s"
        + (f"; whole run {_duration(total_seconds)}" if total_seconds is not None else ""),
        f"- history, logs and plan: {run_dir}",
        "",
        "## Faults and operations injected",
        "",
        "| fault | planned | injected | skipped | claims hit | what |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in result.faults:
        lines.append(
            f"| {row.kind} | {row.planned} | {row.injected} | {row.skipped} | {row.claims_hit} | {row.note} |"
        )
    lines += [
        "",
        HIT,
        "",
        "## Invariants",
        "",
        "| # | result | invariant | source | checked |",
        "|---:|---|---|---|---:|",
    ]
    for i, inv in enumerate(result.invariants, 1):
        verdict = "held" if inv.held else f"VIOLATED ({len(inv.violations)})"
        lines.append(f"| {i} | {verdict} | {inv.name} | {inv.source} | {inv.checked} |")
    lines.append("")
    for i, inv in enumerate(result.invariants, 1):
        if inv.note or inv.violations:
            lines.append(f"{i}. {inv.note}" if inv.note else f"{i}.")
            for example in inv.violations[:EXAMPLES]:
                lines.append(f"   - {example}")
            if len(inv.violations) > EXAMPLES:
                lines.append(f"   - ... and {len(inv.violations) - EXAMPLES} more")
    states = ", ".join(f"{k} {v}" for k, v in sorted(s["states"].items()))
    backlog = (
        "" if s["max_backlog"] is None else f", at most {s['max_backlog']} runnable jobs waiting"
    )
    steady = (
        f"- steady load: producers offered {s['steady_offered']:.1f} requests/s for "
        f"{s['steady_seconds']:.0f} s; {s['steady_rate']:.1f} jobs/s finished meanwhile{backlog}"
    )
    rate = (
        f"- **{s['burst_rate']:.1f} jobs/s under faults, saturated**: a burst of "
        f"{s['burst_requests']} requests at {s['steady_seconds']:.0f} s was worked off in "
        f"{s['burst_seconds']:.1f} s (until 95 % of all jobs had finished) while "
        f"{s['faults_in_burst']} faults hit; the last fault came at {s['last_fault_after']:.1f} s "
        f"and the last job finished at {s['last_finish_after']:.1f} s "
        f"({s['rate_overall']:.1f} jobs/s overall)"
    )
    duplicates = (
        f"- **duplicate external effects: {s['dup_jobs']} jobs ({100 * s['dup_rate']:.2f} % of the "
        f"{s['effect_jobs']} jobs with an effect), {s['dup_extra_effects']} extra effects**, "
        f"{s['dup_untouched']} of them on jobs no fault touched; {s['touched_jobs']} jobs were touched "
        f"({100 * s['dup_share_of_touched']:.1f} % of them got a duplicate); "
        f"{s['dup_same_ikey']} of the duplicated jobs' effects shared one idempotency key"
    )
    misc = (
        f"- leases lost: {s['lost']} (renewals refused: {s['renew_refused']}); holder checks that "
        f"said no before an effect: {s['skips']}; enqueue calls that broke off and were sent "
        f"again: {s['enqueue_errors']}"
    )
    lines += [
        "",
        "## Throughput and duplicates",
        "",
        f"- jobs: {s['jobs']} ({states}); {s['claims']} claims",
        steady,
        rate,
        duplicates,
        misc,
        *_concurrency_lines(s),
        f"- dead jobs that were not meant to die (task other than doomed): {s['unexpected_dead']}",
    ]
    for example in s["unexpected_dead_examples"]:
        lines.append(f"  - {example}")
    top = list(s["fail_errors"].items())[:8]
    if top:
        lines.append(
            "- errors recorded by fail or burial: " + "; ".join(f"{k} ×{v}" for k, v in top)
        )
    lines += ["", WHY_DUPLICATES, ""]
    if result.findings:
        lines += ["## Findings (not invariant violations)", ""]
        lines += [f"- {f}" for f in result.findings]
        lines.append("")
    verdict = "every invariant held" if result.ok else "SOME INVARIANTS WERE VIOLATED"
    lines += [f"**Result: {verdict}.**", ""]
    return "\n".join(lines)
