"""Progress on stderr: current cell, repetition, and an estimate of the time left."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr, quiet: bool = False) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.quiet = quiet
        self.began = time.monotonic()
        self.tty = stream.isatty()

    def step(self, what: str, rep: int, reps: int) -> None:
        self.item(f"rep {rep}/{reps} {what}")

    def item(self, what: str) -> None:
        """The next item of the total is under way (or done): a line, replaced on a tty."""
        if self.quiet:
            return
        line = f"[{self.done + 1}/{self.total}] {what}  {self._eta()}"
        if self.tty:
            self.stream.write("\r\x1b[2K" + line[:160])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self) -> None:
        self.done += 1

    def note(self, message: str) -> None:
        """A line that stays (a failure, a server started)."""
        if self.quiet and not message.startswith("!"):
            return
        if self.tty:
            self.stream.write("\r\x1b[2K")
        self.stream.write(message + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    def _eta(self) -> str:
        if not self.done:
            return "ETA --"
        per = (time.monotonic() - self.began) / self.done
        left = int(per * (self.total - self.done))
        return f"ETA {left // 60}m{left % 60:02d}s"
