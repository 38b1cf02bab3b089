"""The dashboard's pages and actions, and `serve` for `taskboard dashboard`.

Reads go through the SQL API only: queue_overview, job_activity,
find_jobs_summary, get_job and the schedules view. An action is offered when the
login has EXECUTE on its function (the admin role's grants) and runs that
function; the database decides, the page only hides what would be refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import importlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
import psycopg
import uvicorn
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from taskboard import metrics, runner
from taskboard.errors import (
    ConfigError,
    InvalidArgument,
    PermissionDenied,
    SchemaVersionError,
    TaskboardError,
    one_line,
    translated,
)
from taskboard.periodic import Schedule
from taskboard.settings import Settings
from taskboard.sql import admin_async, loaders, parameters, session_async
from taskboard.sql import dashboard as sql_dashboard
from taskboard.web import chart, security, tracebacks

log = logging.getLogger("taskboard.dashboard")

APPLICATION_NAME = "taskboard dashboard"
ADMIN_ROLE = "taskboard_admin (PREFIX_admin if installed with another prefix)"
RECENT = dt.timedelta(hours=1)
CHART_MINUTES = 60
PAGE = 50
REFRESH_SECONDS = 5
# A page waits this long for a statement, and for a lock, then says so:
# a session holding a lock on a Taskboard table must not hang every page.
STATEMENT_TIMEOUT = "5s"
LOCK_TIMEOUT = "2s"
POOL_WAIT_SECONDS = 2.0  # for a pooled connection before a page opens one of its own
PARTIAL_HEADER = "x-taskboard-partial"
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    # No other site may frame the pages (clickjacking the actions).
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "same-origin",
}
# A form is a token, the page to return to and a queue name: far smaller than this.
MAX_FORM_BYTES = 16 * 1024
# The states a job may be in.
STATES = ("waiting", "queued", "running", "succeeded", "dead", "cancelled")
# The workers page lists at most this many held leases; a lease ending within
# SOON is marked.
WORKER_ROWS = 500
SOON = dt.timedelta(seconds=15)
# A bulk action changes at most this many jobs, the newest first; the page says so.
BULK_MAX = 500
# What each bulk action applies to: the states its SQL function changes.
BULK_STATES = {"retry": ("dead", "cancelled"), "cancel": ("waiting", "queued", "running")}

Page = Callable[[Request, psycopg.AsyncConnection[Any]], Awaitable[Response]]


class Problem(Exception):
    """A request the dashboard answers with an error page: status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(
    settings: Settings,
    *,
    schedules: Mapping[str, Schedule] | None = None,
    listen_host: str | None = None,
) -> Starlette:
    """The dashboard as an ASGI app over `settings.database_url`.

    `schedules` (an app's, from `--app`) give the schedules page each one's
    cron and next slot; without them it shows what the database knows.
    `listen_host` (default: `settings.dashboard_host`) is the address it is
    served on, which requests may name in their Host header.
    """
    dashboard = Dashboard(settings, schedules or {})
    routes = [
        Route("/", dashboard.page(dashboard.overview)),
        Route("/jobs", dashboard.page(dashboard.jobs)),
        Route("/jobs/{job_id}", dashboard.page(dashboard.job)),
        Route("/schedules", dashboard.page(dashboard.schedules)),
        Route("/workers", dashboard.page(dashboard.workers)),
        Route("/bulk", dashboard.page(dashboard.bulk)),
        Route("/bulk", dashboard.action(dashboard.bulk_action), methods=["POST"]),
        Route("/metrics", dashboard.metrics),
        Route(
            "/jobs/{job_id}/{action:str}", dashboard.action(dashboard.job_action), methods=["POST"]
        ),
        # The queue goes in the form, not the path: a queue name may hold "/" or
        # be "..", which a path would route elsewhere or a browser would rewrite.
        Route("/queues/{action:str}", dashboard.action(dashboard.queue_action), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=dashboard.lifespan)
    if settings.dashboard_password is not None:
        app.add_middleware(
            security.BasicAuth, user=settings.dashboard_user, password=settings.dashboard_password
        )
    # Added last, so it runs first: a foreign Host is refused before anything else.
    app.add_middleware(
        security.AllowedHosts,
        listen_host=listen_host or settings.dashboard_host,
        extra=settings.dashboard_allowed_hosts,
    )
    return app


class Dashboard:
    def __init__(
        self,
        settings: Settings,
        schedules: Mapping[str, Schedule],
    ) -> None:
        self.settings = settings
        self.declared = schedules
        self._pool: AsyncConnectionPool[Any] | None = None
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("taskboard.web", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["when"] = when
        self.templates.filters["ago"] = ago
        self.templates.filters["span"] = span
        self.templates.filters["as_json"] = as_json
        self.templates.filters["handler_frames"] = tracebacks.handler_frames

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._pool = AsyncConnectionPool(
            self.settings.database_url,
            min_size=1,
            max_size=4,
            kwargs=self.settings.connection_options(application_name=APPLICATION_NAME),
            configure=bounded_waits,
            # A connection the server dropped (a restart) is replaced, not shown as a 503.
            check=AsyncConnectionPool.check_connection,
            open=False,
            timeout=10,
        )
        await self._pool.open()
        try:
            yield
        finally:
            await self._pool.close()

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        assert self._pool is not None, "the dashboard's lifespan opens its pool"
        return self._pool

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection of the pool; when it has none within POOL_WAIT_SECONDS, one of
        this request's own. After an outage the pool retries with a backoff that doubles
        (up to minutes): a database back in the meantime still answers the next page."""
        try:
            conn = await self.pool.getconn(timeout=POOL_WAIT_SECONDS)
        except PoolTimeout:
            try:
                own = await psycopg.AsyncConnection.connect(
                    self.settings.database_url,
                    **self.settings.connection_options(application_name=APPLICATION_NAME),
                )
            except psycopg.OperationalError as exc:
                raise PoolTimeout(one_line(str(exc))) from exc
            async with own:
                await bounded_waits(own)
                yield own
            return
        try:
            yield conn
        finally:
            await self.pool.putconn(conn)

    # -- pages -------------------------------------------------------------------

    def page(self, read: Page) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                async with self.connection() as conn:
                    response = await read(request, conn)
            except Problem as problem:
                response = self.error(request, problem.status, problem.message)
            except (psycopg.Error, PoolTimeout, OSError, SchemaVersionError) as exc:
                response = self.failure(request, exc)
            security.remember_csrf(request, response)
            return response

        return endpoint

    def render(
        self, request: Request, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        template = self.templates.get_template(name)
        values = {
            "request": request,
            "csrf": security.csrf_token(request),
            "csrf_field": security.CSRF_FIELD,
            "refresh_seconds": REFRESH_SECONDS,
            "live": True,  # the page refreshes itself (base.html)
            "notice": request.query_params.get("notice", ""),
            "path": request.url.path,
            "here": str(request.url.path) + (f"?{request.url.query}" if request.url.query else ""),
            **context,
        }
        if request.headers.get(PARTIAL_HEADER):
            # Live refresh: only what is inside <main>.
            body = "".join(template.blocks["main"](template.new_context(values)))
        else:
            body = template.render(values)
        return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)

    def error(self, request: Request, status: int, message: str) -> HTMLResponse:
        return self.render(request, "error.html", status=status, message=message)

    def failure(self, request: Request, exc: BaseException) -> HTMLResponse:
        if isinstance(exc, PoolTimeout):
            message = "no database connection in time (is the database up?)"
            if isinstance(exc.__cause__, psycopg.OperationalError):
                message += f": {exc}"  # what the last attempt to connect was told
            message += "; this page will try again"
        elif isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable):
            message = (
                "the database did not answer in time (a statement or a lock wait ran out); "
                "this page will try again"
            )
        else:
            error = translated(exc) if isinstance(exc, psycopg.Error) else exc
            message = f"cannot read the database: {one_line(str(error))}"
        log.warning("dashboard: %s", message)
        return self.error(request, 503, message)

    async def overview(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        # Read at every page: a schema reverted past what this driver supports while the
        # dashboard runs is a page that says so (SchemaVersionError).
        await session_async.aread_schema(conn)
        queues = await sql_dashboard.aqueue_overview(conn, RECENT)
        activity = await sql_dashboard.ajob_activity(conn, RECENT)
        allowed = await sql_dashboard.aallowed_actions(conn)
        now = queues[0]["read_at"] if queues else await database_now(conn)
        buckets = chart.per_minute(activity, now, CHART_MINUTES)
        # The cards count the same hour as the table (job_activity's); the
        # chart shows whole minutes, the oldest partial one left out.
        totals = {
            name: sum(int(row[name]) for row in activity)
            for name in ("succeeded", "failed", "dead")
        }
        return self.render(
            request,
            "overview.html",
            queues=queues,
            now=now,
            chart=chart.activity_svg(buckets),
            totals=totals,
            allowed=allowed,
        )

    async def jobs(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        query = request.query_params
        if query.get("id", "").strip():
            job_id = parse_id(query["id"])
            return RedirectResponse(f"/jobs/{job_id}", status_code=303)
        # A name is matched exactly as given (" " is a queue name); empty means any.
        filters = {
            "queue": query.get("queue") or None,
            "state": query.get("state") or None,
            "task": query.get("task") or None,
        }
        for name, text in filters.items():
            if text is not None and "\x00" in text:
                raise Problem(400, f"{name} must not contain a NUL character")
        if filters["state"] is not None and filters["state"] not in STATES:
            raise Problem(
                400, f"state must be one of {', '.join(STATES)}, got {filters['state']!r}"
            )
        after = parse_id(query["after"], "after") if query.get("after", "").strip() else None
        try:
            params = parameters.find_jobs_params(
                filters["queue"], filters["state"], filters["task"], after, PAGE + 1
            )
        except InvalidArgument as exc:
            raise Problem(400, str(exc)) from None
        # A line a job: the payload, result and errors stay in the database (get_job
        # gives them to the job's page).
        found = await sql_dashboard.afind_jobs_summary(conn, params)
        page, more = found[:PAGE], len(found) > PAGE
        next_url = None
        if more:
            given = {k: v for k, v in filters.items() if v}
            next_url = "/jobs?" + urlencode({**given, "after": page[-1]["job_id"]})
        return self.render(
            request,
            "jobs.html",
            jobs=page,
            filters=filters,
            after=after,
            next_url=next_url,
            states=STATES,
            now=await database_now(conn),
        )

    async def job(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        job_id = parse_id(request.path_params["job_id"])
        job = await admin_async.aget_job(conn, parameters.job_params(job_id))
        if job is None:
            raise Problem(404, f"job {job_id} does not exist (or was pruned)")
        allowed = await sql_dashboard.aallowed_actions(conn)
        history = await sql_dashboard.ajob_history(conn, job_id)
        return self.render(
            request,
            "job.html",
            job=job,
            allowed=allowed,
            timeline=timeline(job.errors, history or []),
            history_shown=history is not None,
        )

    async def workers(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        """Who holds what, since when, and the leases close to expiry or past it."""
        leases = await sql_dashboard.aworker_leases(conn, WORKER_ROWS)
        if leases is None:
            raise Problem(403, f"this login may not list who holds what: grant it {ADMIN_ROLE}")
        workers: dict[str, list[dict[str, Any]]] = {}
        for lease in leases:
            workers.setdefault(lease["worker"], []).append(lease)
        return self.render(
            request,
            "workers.html",
            workers=workers,
            held=len(leases),
            capped=len(leases) >= WORKER_ROWS,
            worker_rows=WORKER_ROWS,
            soon=SOON,
            now=await database_now(conn),
        )

    async def bulk(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        """Pick a filtered set and an action; then confirm, seeing how many jobs it changes."""
        query = request.query_params
        if not query.get("action"):
            return self.render(
                request, "bulk.html", chosen=None, filters=None, bulk_max=BULK_MAX, states=STATES
            )
        action, filters = bulk_filters(query)
        params = parameters.find_jobs_params(
            filters["queue"], filters["state"], filters["task"], None, BULK_MAX + 1
        )
        # Their ids only: a line a job, never the payloads, results or errors (500 jobs
        # of 4 MB would be 2 GB a refresh).
        found = await sql_dashboard.afind_jobs_summary(conn, params)
        allowed = await sql_dashboard.aallowed_actions(conn)
        return self.render(
            request,
            "bulk.html",
            chosen=action,
            filters=filters,
            jobs=found[:BULK_MAX],
            more=len(found) > BULK_MAX,
            bulk_max=BULK_MAX,
            states=STATES,
            allowed=allowed,
            # A refresh would replace the ids under the button while the person reads them.
            live=False,
        )

    async def bulk_action(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        """Retry or cancel the jobs the confirmation listed, each with its SQL function."""
        form = request.state.form
        action = form.get("action", "")
        if action not in BULK_STATES:
            raise Problem(400, f"action must be retry or cancel, got {action!r}")
        # Each job once: "retried 1 of 3 jobs" for one job named thrice would be a lie.
        ids = list(dict.fromkeys(parse_id(t) for t in form.get("ids", "").split(",") if t.strip()))
        if len(ids) > BULK_MAX:
            raise Problem(400, f"ids must name at most {BULK_MAX} jobs, got {len(ids)}")
        change = admin_async.aretry if action == "retry" else admin_async.acancel
        past = "retried" if action == "retry" else "cancelled"
        changed = 0
        for done, job_id in enumerate(ids):
            try:
                changed += bool(await change(conn, parameters.job_params(job_id)))
            except psycopg.Error as exc:
                if done == 0:
                    raise  # nothing changed: the action's own answer (403, 400, 503)
                # Each call commits: say what was changed before the one that failed.
                reason = one_line(str(translated(exc, role_needed=ADMIN_ROLE)))
                stopped = (
                    f"{past} {changed} of {len(ids)} jobs, then stopped at job {job_id} "
                    f"({reason}); the other {len(ids) - done} were not changed"
                )
                log.warning("dashboard: bulk %s", stopped)
                raise Problem(503, stopped) from None
        notice = f"{past} {changed} of {len(ids)} jobs"
        log.info("dashboard: bulk %s", notice)
        return self.back(request, "/bulk", notice)

    async def schedules(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        rows = {row["schedule"]: row for row in await sql_dashboard.aschedules(conn)}
        now = await database_now(conn)
        names = sorted(set(rows) | set(self.declared))
        shown = []
        for name in names:
            row = rows.get(name, {})
            declared = self.declared.get(name)
            slot_task, slot_queue = row.get("slot_task"), row.get("slot_queue")
            conflict = (
                declared.slot_conflict(slot_task, slot_queue, row.get("last_job_id"))
                if declared
                else None
            )
            shown.append(
                {
                    "name": name,
                    "cron": declared.cron.expression if declared else None,
                    "task": declared.task if declared else slot_task,
                    "queue": declared.queue if declared else slot_queue,
                    "last_slot": row.get("last_slot"),
                    # A slot taken for another task is not the schedule's job.
                    "last_job_id": None if conflict else row.get("last_job_id"),
                    "last_job_state": None if conflict else row.get("last_job_state"),
                    "conflict": conflict,
                    "next_slot": declared.cron.after(now) if declared else None,
                }
            )
        return self.render(
            request, "schedules.html", schedules=shown, now=now, knows_crons=bool(self.declared)
        )

    async def metrics(self, request: Request) -> Response:
        """The queue exporter's gauges (as `taskboard metrics` serves them)."""
        try:
            client = importlib.import_module("prometheus_client")
        except ImportError:
            return PlainTextResponse(
                "/metrics needs prometheus-client: pip install 'taskboard-pg[metrics]'\n",
                status_code=404,
            )

        def scrape() -> bytes:
            registry = metrics.exporter_registry(self._connect)
            return bytes(client.generate_latest(registry))

        body = await asyncio.to_thread(scrape)
        return Response(body, media_type=client.CONTENT_TYPE_LATEST)

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            self.settings.database_url,
            **self.settings.connection_options(application_name=APPLICATION_NAME),
        )

    # -- actions -------------------------------------------------------------------

    def action(self, act: Page) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            problem = security.origin_problem(request)
            if problem is not None:
                return self.error(request, 403, problem)
            try:
                form = await read_form(request)
            except Problem as refused:
                return self.error(request, refused.status, refused.message)
            problem = security.token_problem(request, form.get(security.CSRF_FIELD))
            if problem is not None:
                return self.error(request, 403, problem)
            for name, value in form.items():
                if "\x00" in value:
                    return self.error(request, 400, f"{name} must not contain a NUL character")
            request.state.form = form
            try:
                async with self.connection() as conn:
                    return await act(request, conn)
            except Problem as failed:
                return self.error(request, failed.status, failed.message)
            except psycopg.Error as exc:
                error = translated(exc, role_needed=ADMIN_ROLE)
                if isinstance(error, PermissionDenied):
                    return self.error(request, 403, one_line(str(error)))
                if isinstance(error, InvalidArgument):
                    return self.error(request, 400, one_line(str(error)))
                return self.failure(request, exc)
            except TaskboardError as exc:
                return self.error(request, 400, one_line(str(exc)))
            except (PoolTimeout, OSError) as exc:
                return self.failure(request, exc)

        return endpoint

    async def job_action(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        job_id = parse_id(request.path_params["job_id"])
        action = request.path_params["action"]
        params = parameters.job_params(job_id)
        if action == "cancel":
            done = await admin_async.acancel(conn, params)
            notice = f"job {job_id} cancelled" if done else f"job {job_id} was already finished"
        elif action == "retry":
            done = await admin_async.aretry(conn, params)
            notice = f"job {job_id} queued again" if done else f"job {job_id} cannot be retried now"
        else:
            raise Problem(404, f"no action {action!r} on a job: cancel or retry")
        if not done and await admin_async.aget_job(conn, params) is None:
            raise Problem(404, f"job {job_id} does not exist (or was pruned)")
        log.info("dashboard: %s", notice)
        return self.back(request, f"/jobs/{job_id}", notice)

    async def queue_action(self, request: Request, conn: psycopg.AsyncConnection[Any]) -> Response:
        queue = request.state.form.get("queue", "")
        action = request.path_params["action"]
        params = parameters.queue_params(queue)
        if action == "pause":
            done = await admin_async.apause(conn, params)
            notice = f"queue {queue} paused" if done else f"queue {queue} was already paused"
        elif action == "resume":
            done = await admin_async.aresume(conn, params)
            notice = f"queue {queue} resumed" if done else f"queue {queue} was not paused"
        elif action == "limit":
            limit = parse_limit(request.state.form.get("max_running", ""))
            await admin_async.aset_queue_limit(conn, parameters.queue_limit_params(queue, limit))
            notice = f"queue {queue}: " + (
                "no limit" if limit is None else f"at most {limit} running"
            )
        else:
            raise Problem(404, f"no action {action!r} on a queue: pause, resume or limit")
        log.info("dashboard: %s", notice)
        return self.back(request, "/", notice)

    def back(self, request: Request, default: str, notice: str) -> Response:
        """303 to the page the form was on (a path of this site only), with a notice."""
        target = request.state.form.get("next", "") or default
        if not target.startswith("/") or target.startswith("//"):
            target = default
        path, _, query = target.partition("?")
        kept = [(k, v) for k, v in parse_qsl(query) if k != "notice"]
        return RedirectResponse(f"{path}?{urlencode([*kept, ('notice', notice)])}", status_code=303)


# -- values --------------------------------------------------------------------------


async def bounded_waits(conn: psycopg.AsyncConnection[Any]) -> None:
    """Bound how long the dashboard's statements may run and wait for locks."""
    await conn.execute(f"SET statement_timeout = '{STATEMENT_TIMEOUT}'")
    await conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")


async def read_form(request: Request) -> dict[str, str]:
    """The POST's form fields; Problem 413 once the body passes MAX_FORM_BYTES (no more is read)."""
    too_large = Problem(413, f"the form is larger than {MAX_FORM_BYTES} bytes")
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > MAX_FORM_BYTES:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise too_large
    return dict(parse_qsl(body.decode("utf-8", "replace")))


async def database_now(conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
    row = await (await conn.execute("SELECT pg_catalog.clock_timestamp()")).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def parse_id(value: str, name: str = "job id") -> int:
    try:
        job_id = int(value.strip())
    except ValueError:
        raise Problem(400, f"{name} must be a whole number, got {value!r}") from None
    try:
        return parameters.int8(name, job_id)
    except InvalidArgument as exc:
        raise Problem(400, str(exc)) from None


def bulk_filters(query: Mapping[str, str]) -> tuple[str, dict[str, str | None]]:
    """The bulk action and its filters (queue, state, task) from the query; Problem 400 on bad ones."""
    action = query.get("action", "")
    if action not in BULK_STATES:
        raise Problem(400, f"action must be retry or cancel, got {action!r}")
    filters = {name: query.get(name) or None for name in ("queue", "state", "task")}
    for name, text in filters.items():
        if text is not None and "\x00" in text:
            raise Problem(400, f"{name} must not contain a NUL character")
    if filters["state"] not in BULK_STATES[action]:
        *others, last = BULK_STATES[action]
        raise Problem(
            400,
            f"state must be {', '.join(others)} or {last} to {action}, "
            f"got {filters['state'] or 'none'}",
        )
    return action, filters


def parse_limit(value: str) -> int | None:
    text = value.strip().lower()
    if text in ("", "none"):
        return None
    try:
        return int(text)
    except ValueError:
        raise Problem(400, f"the limit must be a whole number or none, got {value!r}") from None


def timeline(errors: Any, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed attempts (`errors` entries) and the history lines of a job, oldest first.

    Each item is {"error": entry} or {"event": row}; an entry whose time does not
    read keeps its place after the ones that do."""
    items: list[tuple[dt.datetime, int, dict[str, Any]]] = []
    for order, entry in enumerate(errors if isinstance(errors, list) else []):
        at = entry.get("at") if isinstance(entry, dict) else None
        items.append((error_time(at), order, {"error": entry}))
    for order, row in enumerate(history, start=len(items)):
        at = row.get("at")
        items.append((at if isinstance(at, dt.datetime) else LAST, order, {"event": row}))
    return [item for _, _, item in sorted(items, key=lambda item: (item[0], item[1]))]


# Where an entry whose time does not read goes: last.
LAST = dt.datetime.max.replace(tzinfo=dt.UTC)


def error_time(value: Any) -> dt.datetime:
    """The time of an errors entry (an ISO 8601 string), LAST when it does not read."""
    if not isinstance(value, str):
        return LAST
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return LAST
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def when(value: dt.datetime | None) -> str:
    if value is None:
        return ""
    if isinstance(value, loaders.UnreadableTime):
        return str(value)  # what PostgreSQL printed: a year datetime cannot hold
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(value: dt.datetime | None, now: dt.datetime) -> str:
    """How long before `now`, short: 42s, 3m 5s, 2h 10m, 4d 3h."""
    if value is None:
        return ""
    seconds = int((now - value).total_seconds())
    if seconds < 0:
        return "in " + ago(now, value)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60}s"
    if seconds < 86400:
        return f"{seconds // 3600}h {seconds % 3600 // 60}m"
    return f"{seconds // 86400}d {seconds % 86400 // 3600}h"


def span(value: dt.timedelta | None) -> str:
    """A length of time, short and exact: 1s, 90s as 1m 30s, 2h, 1d 12h, 0.5s."""
    if value is None:
        return ""
    if value < dt.timedelta(0):
        return "-" + span(-value)
    micros = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
    if micros == 0:
        return "0s"
    seconds, fraction = divmod(micros, 1_000_000)
    parts = [
        f"{amount}{unit}"
        for amount, unit in (
            (seconds // 86400, "d"),
            (seconds % 86400 // 3600, "h"),
            (seconds % 3600 // 60, "m"),
        )
        if amount
    ]
    rest = seconds % 60
    if fraction:
        parts.append(f"{rest}.{fraction:06d}".rstrip("0") + "s")
    elif rest:
        parts.append(f"{rest}s")
    return " ".join(parts)


def as_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


# -- serving -------------------------------------------------------------------------


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    schedules: Mapping[str, Schedule] | None = None,
) -> None:
    """Serve the dashboard until SIGTERM or SIGINT; ConfigError when it cannot listen."""
    if settings.dashboard_password is None and not security.is_loopback(host):
        log.warning(
            "dashboard: listening on %s without a password: anyone who can reach it reads "
            "every job and takes every action this login may. Set "
            "TASKBOARD_DASHBOARD_PASSWORD, or listen on 127.0.0.1.",
            host,
        )
    if not settings.dashboard_allowed_hosts and not security.is_loopback(host):
        log.warning(
            "dashboard: listening on %s, it answers only to the names localhost, 127.0.0.1, "
            "::1 and %s; set TASKBOARD_DASHBOARD_ALLOWED_HOSTS to the names it is opened by.",
            host,
            host,
        )
    sock = listen(host, port)
    config = uvicorn.Config(
        create_app(settings, schedules=schedules, listen_host=host),
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    web = _Server(config)
    shown = f"[{host}]" if ":" in host else host
    log.info("dashboard on http://%s:%d/", shown, sock.getsockname()[1])

    async def work(stop: asyncio.Event) -> None:
        serving = asyncio.create_task(web.serve(sockets=[sock]))
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        web.should_exit = True
        stopping.cancel()
        await serving

    try:
        runner.run_until_signalled(work)
    finally:
        sock.close()


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port; ConfigError naming them when it cannot be."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ConfigError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handling: taskboard.runner's is used."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
