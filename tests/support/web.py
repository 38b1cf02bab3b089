"""Servers the tests start: a free port on loopback, and waiting until one answers."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx2 as httpx


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
