"""A client's hold: the harness's side of the two barriers of a measured phase (clients/README.md, "Output
and the two barriers"), the way a client takes them:

- ``stdin`` (every runtime that can read its stdin): ``GO`` is one line written to the
  client's stdin; the hold ends when its stdin is closed.
- ``http`` (k6, which cannot read stdin): a loopback HTTP endpoint of the harness, whose
  URL the client gets in ``WSBENCH_HOLD_URL``. ``GET <url>go`` is answered ``GO`` only once
  the harness says so (after its start readings; ``409`` if the client is let go without
  it); ``GET <url>hold`` is answered only when the hold ends (after the end readings).
  The client blocks in each request, so the guarantees are those of stdin: nothing it
  measures runs before the start readings, and it is alive while the end readings are
  taken. The URL carries a random token; any other path is ``404``.

Both are made before the client is spawned (``env``: what it gets in its environment;
``stdin``: whether it needs a pipe), ``attach``\\ ed to it after, and ``close``\\ d when it is
done with (which also lets go of an HTTP request still waiting).
"""

from __future__ import annotations

import secrets
import socket
import subprocess
import threading
import time
from typing import Protocol

from . import procs

GO_LINE = "GO"
_MAX_REQUEST = 8192


class Hold(Protocol):
    stdin: bool  # the client needs a stdin pipe
    env: dict[str, str]  # added to the client's environment

    def attach(self, proc: subprocess.Popen[bytes]) -> None: ...

    def go(self) -> str | None:
        """Let the client start its measured phase; None, or why it could not be told."""

    def release(self) -> None:
        """End the hold (the end readings are taken)."""

    def close(self) -> None: ...


class StdinHold:
    stdin = True

    def __init__(self) -> None:
        self.env = {"WSBENCH_HOLD": "1"}
        self._proc: subprocess.Popen[bytes] | None = None

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc

    def go(self) -> str | None:
        assert self._proc is not None
        return procs.tell(self._proc, GO_LINE)

    def release(self) -> None:
        if self._proc is not None:
            procs.release(self._proc)

    def close(self) -> None:
        self.release()


class HttpHold:
    """The loopback endpoint of one client run; a thread accepts, one thread per request
    waits for its answer. Nothing runs until the client asks."""

    stdin = False

    def __init__(self) -> None:
        self._token = secrets.token_hex(8)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/{self._token}/"
        self.env = {"WSBENCH_HOLD": "1", "WSBENCH_HOLD_URL": self.url}
        self._go = threading.Event()
        self._released = threading.Event()
        self.asked: list[str] = []  # the paths asked for, in order (what the tests look at)
        self.answered: dict[str, float] = {}  # when each was answered (time.monotonic)
        self._thread: threading.Thread | None = None

    def attach(self, proc: subprocess.Popen[bytes] | None) -> None:
        """Start answering (after the spawn: the harness forks no child while this thread
        exists; a request that comes before waits in the listen queue)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._accept, name="barrier-http", daemon=True)
            self._thread.start()

    def go(self) -> str | None:
        if self._released.is_set():
            return "the barrier was released before GO"
        self._go.set()
        return None

    def release(self) -> None:
        self._released.set()

    def close(self) -> None:
        self._released.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self._sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._answer, args=(conn,), name="barrier-request", daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10.0)
                path = _request_path(conn)
                what = {f"/{self._token}/go": "go", f"/{self._token}/hold": "hold"}.get(path or "")
                if what is not None:
                    self.asked.append(what)
                if what == "go":
                    while not (self._go.is_set() or self._released.is_set()):
                        self._go.wait(0.5)
                    status, body = (200, "GO") if self._go.is_set() else (409, "released before GO")
                elif what == "hold":
                    self._released.wait()
                    status, body = 200, "released"
                else:
                    status, body = 404, "not a barrier of this run"
                if what is not None:
                    self.answered[what] = time.monotonic()
                reason = {200: "OK", 404: "Not Found", 409: "Conflict"}[status]
                payload = body.encode()
                conn.sendall(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: "
                             f"{len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
            except OSError:
                return  # the client went away


def _request_path(conn: socket.socket) -> str | None:
    """The path of an HTTP request's first line (the headers are read and ignored)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < _MAX_REQUEST:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    parts = data.split(b"\r\n", 1)[0].split()
    return parts[1].decode("latin-1") if len(parts) >= 2 and parts[0] == b"GET" else None


def hold_for(mode: str) -> Hold:
    """The hold of a client whose catalog entry says ``barrier = mode``."""
    return HttpHold() if mode == "http" else StdinHold()
