"""The wire between a host's claimer and its handler processes: batches of messages.

Each frame is a 4-byte big-endian length and a pickled list of messages
(tuples whose first item names them). The socket pair is private to one
parent and the child it started, under one user: pickle is safe there.
Messages queued in one turn of the event loop go out as one frame, and
each frame that arrives is handed to `on_batch` at once, in the loop's
callback: no task waits on the socket.
"""

from __future__ import annotations

import asyncio
import pickle
import socket
import struct
from collections.abc import Callable
from typing import Any

HEADER = struct.Struct(">I")

Message = tuple[Any, ...]


class Wire(asyncio.Protocol):
    """One end of the socket pair: `send` queues a message; `on_batch` gets each batch
    received, `on_closed` is called once the other end has gone."""

    def __init__(
        self,
        on_batch: Callable[[list[Message]], None],
        on_closed: Callable[[], None],
        on_unsendable: Callable[[Message, Exception], None],
    ) -> None:
        self.on_batch = on_batch
        self.on_closed = on_closed
        self.on_unsendable = on_unsendable
        self.closed = asyncio.Event()
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._queued: list[Message] = []

    @classmethod
    async def open(
        cls,
        sock: socket.socket,
        on_batch: Callable[[list[Message]], None],
        on_closed: Callable[[], None],
        on_unsendable: Callable[[Message, Exception], None],
    ) -> Wire:
        """`on_unsendable(message, error)` gets a message that cannot be pickled (a
        payload nested too deep, say) instead of it going out: the rest still do."""
        loop = asyncio.get_running_loop()
        _, wire = await loop.create_unix_connection(
            lambda: cls(on_batch, on_closed, on_unsendable), sock=sock
        )
        return wire

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        start = 0
        while len(buffer) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer, start)
            end = start + HEADER.size + size
            if len(buffer) < end:
                break
            batch: list[Message] = pickle.loads(memoryview(buffer)[start + HEADER.size : end])
            start = end
            self.on_batch(batch)
        del buffer[:start]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self.on_closed()

    # -- sending ------------------------------------------------------------------------

    def send(self, message: Message) -> None:
        """Queue `message`; the loop's next turn sends what was queued as one frame."""
        if not self._queued:
            asyncio.get_running_loop().call_soon(self._flush)
        self._queued.append(message)

    def _flush(self) -> None:
        batch, self._queued = self._queued, []
        transport = self._transport
        if not batch or transport is None or transport.is_closing():
            return
        try:
            data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - whatever pickle raises, the others still go
            data = pickle.dumps(self._sendable(batch), protocol=pickle.HIGHEST_PROTOCOL)
        transport.write(HEADER.pack(len(data)) + data)

    def _sendable(self, batch: list[Message]) -> list[Message]:
        """The messages of `batch` that pickle; each other one goes to on_unsendable."""
        sendable = []
        for message in batch:
            try:
                pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - RecursionError, PicklingError, ...
                self.on_unsendable(message, exc)
            else:
                sendable.append(message)
        return sendable

    async def close(self, timeout: float) -> None:
        """Send what is queued, close, and wait (at most `timeout` seconds) until the socket
        took it all; past that, drop it."""
        self._flush()
        if self._transport is None:
            return
        self._transport.close()  # sends what it still buffers first
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
        except TimeoutError:
            self._transport.abort()
