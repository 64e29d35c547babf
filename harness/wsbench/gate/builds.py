"""The two sides ``wsbench gate --base REF`` compares: the base commit's build and the
head's, counted and measured by one harness (this one) on one machine in one job.

What a side is, "the code under test": what runs inside a counted or measured program
and belongs to this project, all taken from the side's own source tree TREE:

- ``lws-echo`` and ``wsbench-loadgen``: ``TREE/build/bin/``;
- the QuickJS client: ``TREE/clients/quickjs.mjs`` and what it imports by relative path —
  ``TREE/clients/workload/*.js`` (the workload driver runs inside the counted process, so
  it is part of what is counted), the module ``TREE/build/quickjs-websocket/lws.so`` and
  ``websocket.js``, and the echo checks ``TREE/build/clients/wsbench_check.so``.

The head's TREE is the working tree (its pieces in ``build/``, brought up to date first);
the base's is ``build/base/<sha>/``: the commit's files (``git archive``), built with its
own build steps (``scripts/build-tree.sh``: the ``build_with_make`` lines of its
``scripts/setup-native.sh``) into ``build/base/<sha>/build/``. Both sides share, and so do
not compare: ``qjs`` and libwebsockets in ``build/prefix`` (Debian trixie sources at the
pins of ``scripts/pins.sh``, which must be the same in both), the compiler, and the
harness: cells, workloads, message counts, thresholds, and every program that is not the
one counted (a cell's peer is always the head's).

A base tree is a cache keyed by the commit: ``build/base/<sha>/.wsbench-built`` holds the
key it was built with (the commit, the pins, the compiler, build/prefix), and a second
``--base`` of the same commit reuses the tree as it is. The newest ``KEEP`` trees stay.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import procs
from ..environment import sha256_of
from ..errors import WsbenchError
from ..paths import ROOT, relative

BASE_DIR = ROOT / "build" / "base"
QJS_BIN = "build/prefix/bin/qjs"  # shared by both sides (same pins)
PIECES = ("build/bin/lws-echo", "build/bin/wsbench-loadgen", "build/quickjs-websocket/lws.so",
          "build/quickjs-websocket/websocket.js", "build/clients/wsbench_check.so", "clients/quickjs.mjs")
STAMP = ".wsbench-built"
KEEP = 8  # base trees kept in build/base/ (the newest by use)
BUILD_TIMEOUT_S = 900.0
PIN = re.compile(r"^((?:LWS|QJS)_[A-Z]+)=(\S*)\s*$", re.M)


class HeadDoesNotBuild(WsbenchError):
    """The head's native pieces do not build: a failure of the change, not of the gate."""


@dataclass(frozen=True)
class Build:
    side: str  # "head" or "base"
    tree: str  # the source tree, relative to the repository root ("." : the working tree)
    commit: str | None  # None: the working tree's HEAD, as the run's environment records it
    ref: str | None = None  # what the user named
    build_s: float = 0.0  # how long preparing it took (extracting and building, or checking the cache)
    cached: bool = False  # a base tree reused from an earlier run

    def path(self, rel: str) -> str:
        return rel if self.tree == "." else f"{self.tree}/{rel}"

    @property
    def qjs(self) -> tuple[str, ...]:
        return (QJS_BIN, self.path("clients/quickjs.mjs"))

    @property
    def lws_echo(self) -> tuple[str, ...]:
        return (self.path("build/bin/lws-echo"),)

    @property
    def loadgen(self) -> tuple[str, ...]:
        return (self.path("build/bin/wsbench-loadgen"),)

    @property
    def label(self) -> str:
        return f"{self.side} {self.commit[:12]}" if self.commit else f"{self.side} (working tree)"

    def missing(self) -> str | None:
        for rel in (QJS_BIN, *(self.path(p) for p in PIECES)):
            if not (ROOT / rel).exists():
                return rel
        return None

    def record(self) -> dict[str, Any]:
        """What a gate report's environment keeps of this side (``gate_builds``)."""
        return {"side": self.side, "ref": self.ref, "commit": self.commit, "tree": self.tree,
                "build_s": round(self.build_s, 1), "cached": self.cached,
                "binaries": {p: sha256_of(ROOT / self.path(p)) for p in PIECES if p.startswith("build/")}}


HEAD = Build("head", ".", None)


def resolve(ref: str, option: str = "--base") -> str:
    """The full commit id ``ref`` names in this repository; exit 2 (WsbenchError) if none."""
    out = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if out is None or not re.fullmatch(r"[0-9a-f]{40}", out):
        raise WsbenchError(f"{option} {ref}: not a commit of this repository (git rev-parse --verify found "
                           "nothing; a shallow clone may need: git fetch origin <sha>)")
    return out


def head_commit() -> str | None:
    return _git("rev-parse", "HEAD")


def pins_of(commit: str | None) -> dict[str, str]:
    """The pinned QuickJS and libwebsockets of a commit (None: the working tree), from its
    ``scripts/pins.sh`` (or, before that file existed, ``scripts/setup-native.sh``)."""
    for name in ("scripts/pins.sh", "scripts/setup-native.sh"):
        if commit is None:
            path = ROOT / name
            text = path.read_text() if path.exists() else None
        else:
            text = _git("show", f"{commit}:{name}", strip=False)
        if text:
            pins = dict(PIN.findall(text))
            if pins:
                return pins
    return {}


def pin_difference(base: dict[str, str], head: dict[str, str]) -> str | None:
    diffs = [f"{k} {head.get(k, '-')} here, {base.get(k, '-')} in the base" for k in sorted(set(base) | set(head))
             if base.get(k) != head.get(k)]
    return "; ".join(diffs) or None


def prepare(ref: str, side: str, note: Any) -> Build:
    """The commit ``ref`` extracted and built in ``build/base/<sha>/`` (or found there, built
    with the same key). WsbenchError when it does not exist, pins other versions, or does
    not build; for ``side == "head"`` (``--head REF``) a build failure is HeadDoesNotBuild."""
    began = time.monotonic()
    option = "--base" if side == "base" else "--head"
    sha = resolve(ref, option)
    here = pins_of(None)
    why = pin_difference(pins_of(sha), here)
    if why:
        raise WsbenchError(f"{option} {ref} ({sha[:12]}) pins another QuickJS or libwebsockets than this checkout's "
                           f"build/prefix ({why}): its pieces would not be built with the same toolchain")
    tree = BASE_DIR / sha
    key = _key(sha, here)
    stamp = tree / STAMP
    if stamp.exists() and stamp.read_text() == key and all((tree / p).exists() for p in PIECES):
        os.utime(stamp)
        return Build(side, relative(tree), sha, ref, time.monotonic() - began, cached=True)
    note(f"gate: building {side} {sha[:12]} ({ref}) in {relative(tree)}")
    _extract(sha, tree)
    log = tree / "build" / "logs" / "build-tree.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    code = _run([str(ROOT / "scripts" / "build-tree.sh"), str(tree), str(ROOT / "build" / "prefix")], log,
                log.with_suffix(".out"))
    if code != 0:
        reason = _last(log)
        error = HeadDoesNotBuild if side == "head" else WsbenchError
        raise error(f"{option} {ref} ({sha[:12]}) does not build: {reason}")
    missing = [p for p in PIECES if not (tree / p).exists()]
    if missing:
        error = HeadDoesNotBuild if side == "head" else WsbenchError
        raise error(f"{option} {ref} ({sha[:12]}) built no {missing[0]} (its build steps may predate it)")
    stamp.write_text(key)
    _prune(keep=tree)
    return Build(side, relative(tree), sha, ref, time.monotonic() - began, cached=False)


def build_head(note: Any) -> Build:
    """The working tree's pieces brought up to date with its own build steps (make: nothing
    to do when they are); HeadDoesNotBuild when they do not build."""
    began = time.monotonic()
    log = ROOT / "build" / "logs" / "build-tree.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if _run([str(ROOT / "scripts" / "build-tree.sh"), str(ROOT), str(ROOT / "build" / "prefix")], log,
            log.with_suffix(".out")) != 0:
        raise HeadDoesNotBuild(f"the head (working tree) does not build: {_last(log)}")
    missing = HEAD.missing()
    if missing:
        raise HeadDoesNotBuild(f"the head (working tree) has no {missing} (run: make setup)")
    return Build("head", ".", head_commit(), None, time.monotonic() - began)


def _key(sha: str, pins: dict[str, str]) -> str:
    script = (ROOT / "scripts" / "build-tree.sh").read_bytes()
    return "\n".join([f"commit {sha}", f"pins {sorted(pins.items())}", f"cc {_cc()}",
                      f"prefix {ROOT / 'build' / 'prefix'}",
                      f"build-tree.sh {hashlib.sha256(script).hexdigest()[:16]}"]) + "\n"


def _extract(sha: str, tree: Path) -> None:
    """The commit's files (git archive) into ``tree``, atomically: a half-extracted tree is
    never taken for a finished one."""
    tmp = tree.with_name(f".{tree.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(tree, ignore_errors=True)
    tmp.mkdir(parents=True)
    log = tree.with_name(f".{tree.name}.extract.log")
    code = _run(["bash", "-c", 'set -o pipefail; git -C "$1" archive --format=tar "$2" | tar -x -C "$3"',
                 "extract", str(ROOT), sha, str(tmp)], log, None)
    if code != 0:
        raise WsbenchError(f"cannot extract {sha[:12]} into {relative(tree)} ({_last(log)})")
    log.unlink(missing_ok=True)
    tmp.rename(tree)


def _prune(keep: Path) -> None:
    """Only the KEEP most recently used base trees stay (a cache, not an archive)."""
    trees = sorted((p for p in BASE_DIR.iterdir() if p.is_dir() and (p / STAMP).exists() and p != keep),
                   key=lambda p: (p / STAMP).stat().st_mtime, reverse=True)
    for old in trees[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def _run(argv: list[str], log: Path, out: Path | None) -> int:
    """Run a build step; its stderr (the one-line reasons) into ``log``, stdout into ``out``."""
    log.unlink(missing_ok=True)
    try:
        return procs.run(argv, cwd=ROOT, timeout_s=BUILD_TIMEOUT_S, stdout_path=out, stderr_path=log)
    except TimeoutError as exc:
        raise WsbenchError(f"{exc} (log: {relative(log)})") from None
    except OSError as exc:
        raise WsbenchError(f"cannot start {argv[0]}: {exc.strerror}") from None


def _last(log: Path) -> str:
    """The step's own one-line reason (the last line of its stderr), with where to read more."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        lines = []
    line = lines[-1][:300] if lines else "no output"
    return line if "log: " in line else f"{line} (log: {relative(log)})"


def _cc() -> str:
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    return (out.stdout.splitlines() or ["unavailable"])[0]


def _git(*args: str, strip: bool = True) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() if strip else out.stdout
