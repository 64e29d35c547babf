"""``wsbench run --conformance``: where each program's conformance summary comes from.

``--conformance`` (repeatable) takes results files of ``wsbench conformance`` (clients) or
``wsbench conformance --servers`` and at most one of ``auto`` (the default: the newest
complete results files under the run's ``--out`` directory), ``quick`` (the quick subset
for every program no given file covers) or ``off`` (nothing played: a program no given
file covers is "not checked"). A file speaks for a program only if it records the same
program versions: the same command, the same runtime version, and the same hashes of the
lockfiles and native binaries (the environment section); otherwise the quick subset
(or nothing, with ``off``) stands in, and the summary's note says why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import WsbenchError
from ..model import ProgramRecord, Run, read_json

AUTO, QUICK, OFF = "auto", "quick", "off"
KEYWORDS = (AUTO, QUICK, OFF)
SEARCHED = {"client": "conformance-*.json", "server": "server-conformance-*.json"}  # under --out
SEARCH_LIMIT = 20  # the newest files read per side, at most


@dataclass
class Sources:
    given: list[tuple[Path, Run]]  # --conformance FILE, read
    search: Path | None  # auto: the directory whose newest results files are looked at
    fallback: str  # quick or off: for a program no file speaks for
    _found: dict[str, list[tuple[Path, Run]]] = field(default_factory=dict)  # per side, read when first needed

    def candidates(self, side: str) -> list[tuple[Path, Run, bool]]:
        """The files that may speak for a program of ``side``, newest first: those given
        (True), then those found (False)."""
        given = sorted((f for f in self.given if _section(f[1], side) is not None), key=lambda f: f[1].created,
                       reverse=True)
        found: list[tuple[Path, Run]] = []
        if self.search is not None:
            if side not in self._found:
                self._found[side] = _search(self.search, side)
            found = self._found[side]
        return [(path, run, True) for path, run in given] + [(path, run, False) for path, run in found]


def parse(values: list[str] | None, out: Path) -> Sources:
    """The sources ``--conformance`` names; a file that is missing, unreadable or no
    conformance results file, or two keywords, is a one-line error naming it."""
    values = values or []
    words = list(dict.fromkeys(v for v in values if v in KEYWORDS))
    if len(words) > 1:
        raise WsbenchError(f"--conformance takes at most one of {', '.join(KEYWORDS)}, got {' and '.join(words)}")
    given = []
    for value in (v for v in values if v not in KEYWORDS):
        path = Path(value)
        try:
            run = read_json(path)
        except WsbenchError as exc:
            raise WsbenchError(f"--conformance {exc}") from None
        if run.conformance is None and run.server_conformance is None:
            raise WsbenchError(f"--conformance {value}: not a results file of `wsbench conformance` (it has no "
                               f"conformance section)")
        given.append((path, run))
    word = words[0] if words else QUICK if given else AUTO
    return Sources(given, out if word == AUTO else None, OFF if word == OFF else QUICK)


def _search(directory: Path, side: str) -> list[tuple[Path, Run]]:
    """The newest complete conformance results files of ``side`` under ``directory``
    (their names sort by time); a file that cannot be read is passed over."""
    names = sorted(directory.glob(SEARCHED[side]), reverse=True)
    if side == "client":  # conformance-*.json, not server-conformance-*.json
        names = [n for n in names if n.name.startswith("conformance-")]
    out = []
    for path in names[:SEARCH_LIMIT]:
        try:
            run = read_json(path)
        except WsbenchError:
            continue
        if run.complete and _section(run, side) is not None:
            out.append((path, run))
    return out


def _section(run: Run, side: str) -> Any:
    return run.server_conformance if side == "server" else run.conformance


def verdicts_of(run: Run, side: str, name: str) -> dict[str, Any] | None:
    """The verdicts ``run`` holds for program ``name`` of ``side``, if any."""
    section = _section(run, side)
    return None if section is None else section.verdicts.get(name) or None


def versions(run: Run, record: ProgramRecord) -> dict[str, Any]:
    """What says a program is the same: its command (a target: its URL), its runtime's
    version, the lockfiles and the native binaries, as ``run`` recorded them."""
    env = run.environment
    runtime = (env.get("runtimes") or {}).get(record.runtime) or {}
    return {"command": record.target or " ".join(record.command), "runtime": runtime.get("version"),
            "lockfiles": env.get("lockfiles"), "binaries": env.get("binaries")}


def differs(here: dict[str, Any], there: dict[str, Any]) -> str | None:
    """The first of the versions that differs, in a few words (None: the same)."""
    for key in ("command", "runtime", "lockfiles", "binaries"):
        if here.get(key) != there.get(key):
            if key in ("lockfiles", "binaries"):
                names = sorted(k for k in {**(here.get(key) or {}), **(there.get(key) or {})}
                               if (here.get(key) or {}).get(k) != (there.get(key) or {}).get(k))
                return f"{key} differ ({', '.join(names[:3])})"
            return f"{key} '{there.get(key)}' there, '{here.get(key)}' here"
    return None
