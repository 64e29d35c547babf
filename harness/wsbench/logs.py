"""Pointing the user at a child's log file."""

from __future__ import annotations

from pathlib import Path


def last_line(log: Path) -> str:
    """``"; last: <last non-empty line>"`` of ``log``, or "" when there is none."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return f"; last: {lines[-1][:160]}" if lines else ""
