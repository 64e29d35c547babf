"""A deliberately corrupting echo server for the client tests, run in a thread.

It echoes like any contract server, except that it flips one bit (0x01) of one byte in
chosen messages: ``flip(every=1000, offset=0)`` corrupts byte ``offset`` of messages
1000, 2000, ... (counted from 1 over everything a connection sends, warm-up included);
``flip(only=150, offset=40)`` corrupts message 150 alone. Flipping 0x01 keeps ASCII text
valid UTF-8, so the client has to notice the change itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve


@dataclass(frozen=True)
class Flip:
    offset: int
    every: int = 0  # flip messages every, 2 * every, ...
    only: int = 0  # or only this one

    def hits(self, n: int) -> bool:
        return n == self.only if self.only else n % self.every == 0


class FlippingServer:
    def __init__(self, flip: Flip) -> None:
        self.flip = flip
        self.flipped: list[int] = []  # message numbers corrupted
        self._server: Server = serve(self._echo, "127.0.0.1", 0, max_size=None, compression=None)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/"

    def _echo(self, ws: ServerConnection) -> None:
        n = 0
        try:
            for message in ws:
                n += 1
                if self.flip.hits(n) and len(message) > self.flip.offset:
                    message = _flipped(message, self.flip.offset)
                    self.flipped.append(n)
                ws.send(message)
        except ConnectionClosed:
            pass  # the client gave up on us: that is what the tests want

    def __enter__(self) -> "FlippingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)


def _flipped(message: str | bytes, offset: int) -> str | bytes:
    if isinstance(message, str):
        raw = bytearray(message.encode())
        raw[offset] ^= 1
        return raw.decode()
    data = bytearray(message)
    data[offset] ^= 1
    return bytes(data)
