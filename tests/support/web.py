"""The dashboard in tests: an in-process client of it, and for servers the tests start,
a free port on loopback and waiting until one answers."""

from __future__ import annotations

import socket
import subprocess
import time
from typing import Any

import httpx2 as httpx
from starlette.testclient import TestClient

from taskboard.settings import load_settings
from taskboard.web import server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert process.poll() is None, process.communicate()[1]
        try:
            httpx.get(base + "/", timeout=2)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.1)


def client(url: str, **settings: Any) -> TestClient:
    """The dashboard of the database at `url`, in process; redirects are not followed."""
    app = server.create_app(load_settings(database_url=url, **settings))
    return TestClient(app, base_url="http://127.0.0.1:8080", follow_redirects=False)
