"""Where things live, relative to the repository root, and how result files are named."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS_DIR = ROOT / "workloads"
RUNTIMES_FILE = ROOT / "harness" / "runtimes.toml"
REPORTS_DIR = ROOT / "reports"
PROFILES_DIR = ROOT / "profiles"


def relative(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it, for messages."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def time_stamp() -> str:
    """The local time a result file is named by (names sort by time)."""
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S")


@dataclass(frozen=True)
class ReportFiles:
    stamp: str
    json: Path  # <out>/<prefix>-<stamp>.json
    md: Path  # <out>/<prefix>-<stamp>.md


def report_files(out: Path, prefix: str, at: str | None = None) -> ReportFiles:
    """``out/<prefix>-<time>.json`` and ``.md``, at ``at`` (a ``time_stamp()``) or now; ``out``
    is made when missing."""
    when = at or time_stamp()
    out.mkdir(parents=True, exist_ok=True)
    return ReportFiles(when, out / f"{prefix}-{when}.json", out / f"{prefix}-{when}.md")
