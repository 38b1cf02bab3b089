"""The wire between a host's claimer and its handler processes: batches of messages.

Each frame is a 4-byte big-endian length and a pickled list of messages
(tuples whose first item names them). The socket pair is private to one
parent and the child it started, under one user: pickle is safe there.
Messages queued in one turn of the event loop go out as one frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import struct
from typing import Any

HEADER = struct.Struct(">I")

Message = tuple[Any, ...]


class Wire:
    """One end of the socket pair: `send` queues a message, `receive` awaits a batch."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._queued: list[Message] = []

    @classmethod
    async def open(cls, sock: Any) -> Wire:
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        return cls(reader, writer)

    def send(self, message: Message) -> None:
        """Queue `message`; the loop's next turn sends what was queued as one frame."""
        if not self._queued:
            asyncio.get_running_loop().call_soon(self._flush)
        self._queued.append(message)

    def _flush(self) -> None:
        batch, self._queued = self._queued, []
        if not batch or self.writer.is_closing():
            return
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        self.writer.write(HEADER.pack(len(data)) + data)

    async def receive(self) -> list[Message]:
        """The next batch; an empty list once the other end has closed."""
        try:
            header = await self.reader.readexactly(HEADER.size)
            data = await self.reader.readexactly(HEADER.unpack(header)[0])
        except (asyncio.IncompleteReadError, ConnectionError):
            return []
        batch: list[Message] = pickle.loads(data)
        return batch

    async def drain(self) -> None:
        """Send what is queued now and wait until the socket took it."""
        self._flush()
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    def close(self) -> None:
        self._flush()
        self.writer.close()
