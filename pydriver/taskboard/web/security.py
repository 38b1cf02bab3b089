"""Who may use the dashboard (optional HTTP Basic) and that a form came from its own page (CSRF)."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import secrets

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

CSRF_COOKIE = "taskboard_csrf"
CSRF_FIELD = "csrf"
STALE_FORM = "the form is stale or did not come from this dashboard: reload the page and try again"


def csrf_token(request: Request) -> str:
    """The browser's CSRF token: its cookie's, or a new one that `remember_csrf` sets."""
    token = request.cookies.get(CSRF_COOKIE)
    if not token:
        token = getattr(request.state, "new_csrf", None) or secrets.token_urlsafe(32)
        request.state.new_csrf = token
    return token


def remember_csrf(request: Request, response: Response) -> None:
    """Set the cookie of a token made for this request (Strict: never sent by another site)."""
    token = getattr(request.state, "new_csrf", None)
    if token:
        response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/")


def origin_problem(request: Request) -> str | None:
    """Why a POST must be refused before its body is read, or None: it must carry the
    dashboard's cookie and come from this dashboard's own pages."""
    if not request.cookies.get(CSRF_COOKIE):
        return STALE_FORM
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        return f"the form came from another site ({origin})"
    if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
        return "the form came from another site"
    return None


def token_problem(request: Request, form_token: str | None) -> str | None:
    """Why a POST must be refused, or None: the form's token must be the cookie's."""
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not form_token or not hmac.compare_digest(cookie, form_token):
        return STALE_FORM
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The host of a Host header, without its port; IPv6 without brackets; lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class AllowedHosts:
    """Refuse (421) a request whose Host header names a host not allowed.

    Allowed, whatever address the dashboard listens on: loopback's names,
    that address itself, and `extra` (the allow-list). A name reaching it
    beyond loopback must be in `extra`; no address answers any name.
    """

    def __init__(self, app: ASGIApp, listen_host: str, extra: list[str]) -> None:
        self.app = app
        self._names = {host_name(n) for n in (*LOOPBACK_NAMES, listen_host, *extra)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = host_name(Request(scope).headers.get("host", ""))
        if host in self._names:
            await self.app(scope, receive, send)
            return
        response = Response(
            f"Taskboard: this dashboard does not answer to the host {host!r}; add it to "
            "TASKBOARD_DASHBOARD_ALLOWED_HOSTS to open it by that name.\n",
            status_code=421,
            media_type="text/plain",
        )
        await response(scope, receive, send)


class BasicAuth:
    """HTTP Basic on every request, against one user and password (compared in constant time)."""

    def __init__(self, app: ASGIApp, user: str, password: str) -> None:
        self.app = app
        self._expected = f"{user}:{password}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._allowed(Request(scope)):
            await self.app(scope, receive, send)
            return
        response = Response(
            "Taskboard: this dashboard needs a user and password.\n",
            status_code=401,
            headers={"WWW-Authenticate": 'Basic realm="Taskboard", charset="UTF-8"'},
            media_type="text/plain",
        )
        await response(scope, receive, send)

    def _allowed(self, request: Request) -> bool:
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            given = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return False
        return hmac.compare_digest(given, self._expected)
