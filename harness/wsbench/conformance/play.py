"""One client connection playing one case (peer.py routes it here once the upgrade
request has come): the 101 response (with the right Sec-WebSocket-Accept, or a wrong one
if the case says so), the case's steps (frames, pauses, a TLS fault), and everything the
client does meanwhile, into the ``Observation``. A close frame from the client is
answered with a close frame (echoing a code that may be sent, else empty), unless the
peer has sent one already, and the peer then closes TCP (over TLS: close_notify first).
Once the script has been played the client has ``case.react_s`` to end the connection;
after that the peer gives up and closes it (a hang)."""

from __future__ import annotations

import asyncio
from typing import Any

from .cases import Chop, Close, Fault, Pause
from .frames import (CLOSE, ClientFrame, accept_for, close_payload, read_client_frame, server_frame,
                     switching_protocols)
from .observation import Pending, sendable
from .wire import Wire

SETTLE_S = 0.05  # between the 101 and the first step, so the client has taken the response alone
CLOSE_LINGER_S = 0.05  # after our answering close frame: does the client end TCP itself?
REPLY_POLL_S = 0.01  # how often a waiting close looks whether the pongs have come


class Session:
    """One connection playing one case."""

    def __init__(self, pending: Pending, wire: Wire, headers: dict[str, str]) -> None:
        self.case = pending.case
        self.obs = pending.observation
        self.obs.connected = True
        self.obs.request = headers
        self.wire = wire
        self.headers = headers
        # the client sent a close frame or the TCP connection is over: the script stops
        self.stop = asyncio.Event()
        self.t0 = 0.0

    def now(self) -> float:
        return asyncio.get_running_loop().time() - self.t0

    def end(self, how: str) -> None:
        if self.obs.tcp_end is None:
            self.obs.tcp_end, self.obs.tcp_end_t = how, round(self.now(), 4)
        self.stop.set()

    async def run(self) -> None:
        key = self.headers.get("sec-websocket-key")
        if not key:
            self.obs.notes.append("upgrade request without Sec-WebSocket-Key")
            self.wire.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        accept = accept_for(key + "-wrong" if self.case.wrong_accept else key)
        response = switching_protocols(accept, self.case.extensions)
        steps = list(self.case.steps())
        first = b""
        if self.case.with_101 and steps and not isinstance(steps[0], Pause):
            step = steps.pop(0)
            first = step.data if isinstance(step, (Close, Chop)) else step  # type: ignore[union-attr]
        self.t0 = asyncio.get_running_loop().time()
        self.wire.write(response + first)
        if first:
            self.obs.step_t.append(0.0)
        reading = asyncio.create_task(self.read())
        script = asyncio.create_task(self.play(steps, settle=not first))
        stopped = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({script, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not self.stop.is_set():  # the script is played: the client's turn
                try:
                    await asyncio.wait_for(self.stop.wait(), self.case.react_s)
                except asyncio.TimeoutError:
                    self.end("peer-gave-up")
            if not self.obs.gave_up:  # a close frame is being answered, or TCP ending: let it finish
                await asyncio.wait({reading}, timeout=CLOSE_LINGER_S + 0.5)
            if self.obs.tcp_end is None:
                self.end("peer")
        finally:
            for task in (reading, script, stopped):
                task.cancel()
            await asyncio.gather(reading, script, stopped, return_exceptions=True)
            self.obs.tls_end = self.wire.tls_end
            self.wire.abort()

    async def play(self, steps: list[Any], settle: bool) -> None:
        """Write the steps; stop once the client has closed or the connection is over."""
        if settle:
            await asyncio.sleep(SETTLE_S)
        for step in steps:
            if self.stop.is_set():
                return
            if isinstance(step, Pause):
                try:
                    await asyncio.wait_for(self.stop.wait(), step.seconds)
                except asyncio.TimeoutError:
                    pass
                continue
            if isinstance(step, Fault):
                self.obs.fault_t = round(self.now(), 4)
                self.obs.fault = await self.wire.fault(step.kind)
                continue
            if isinstance(step, Close):
                if step.wait:
                    await self.replies()
                    if self.stop.is_set():
                        return
                self.obs.step_t.append(round(self.now(), 4))
                self.obs.peer_close_t = self.obs.step_t[-1]
            else:
                self.obs.step_t.append(round(self.now(), 4))
            if not await self.send(step.data if isinstance(step, Close) else step):
                return
        self.obs.script_done_t = round(self.now(), 4)

    async def replies(self) -> None:
        """Before a waiting close: every pong the case expects, or the reaction time over,
        or the connection over (cases.Close)."""
        deadline = self.now() + self.case.react_s
        while len(self.obs.pongs()) < len(self.case.expect.pongs) and self.now() < deadline:
            try:
                await asyncio.wait_for(self.stop.wait(), REPLY_POLL_S)
                return
            except asyncio.TimeoutError:
                pass

    async def send(self, data: bytes | Chop) -> bool:
        """Write the bytes (a Chop: piece by piece, pausing after each), waiting for each
        write to drain; False once the connection is over."""
        size = data.size if isinstance(data, Chop) else max(1, len(data))
        pause = data.pause if isinstance(data, Chop) else 0.0
        raw = data.data if isinstance(data, Chop) else data
        for at in range(0, max(1, len(raw)), size):
            if self.wire.closing() or (at and self.stop.is_set()):
                return False
            try:
                self.wire.write(raw[at:at + size])
                await self.wire.drain()
            except (ConnectionError, OSError):
                self.end("client-reset")
                return False
            if pause:
                await asyncio.sleep(pause)
        return True

    async def read(self) -> None:
        """Record the client's frames until it ends the connection or our close is done."""
        try:
            while True:
                f = await read_client_frame(self.wire)
                self.obs.frames.append((round(self.now(), 4), f))
                if f.opcode == CLOSE:
                    self.stop.set()
                    await self.answer_close(f)
                    return
        except asyncio.IncompleteReadError:
            self.end("client-eof")
        except (ConnectionError, OSError):
            self.end("client-reset")
        except ValueError as exc:
            self.obs.notes.append(str(exc))
            self.end("peer-gave-up")

    async def answer_close(self, f: ClientFrame) -> None:
        """Complete the closing handshake: our close (unless sent already), then TCP."""
        if self.obs.peer_close_t is None:
            code = f.close_code()
            self.obs.peer_close_t = round(self.now(), 4)
            await self.send(server_frame(CLOSE, close_payload(code if sendable(code) else None)))
        # the client may end TCP itself in the meantime (RFC 6455 7.1.1: the server
        # should close first, but a client may too)
        try:
            rest = await asyncio.wait_for(self.wire.read(1), CLOSE_LINGER_S)
            if not rest:
                self.end("client-eof")
                return
            self.obs.notes.append("the client sent bytes after its close frame")
        except asyncio.TimeoutError:
            pass
        except (ConnectionError, OSError):
            self.end("client-reset")
            return
        self.end("peer")
        self.wire.close()
