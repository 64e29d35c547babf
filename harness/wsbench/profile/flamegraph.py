"""Folded stacks and flamegraph SVGs, through inferno (crates.io, pinned by
scripts/setup-profile.sh): inferno-collapse-perf, inferno-flamegraph, inferno-diff-folded.
Every tool runs in its own process group with a time limit (procs.run)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .. import procs
from ..errors import WsbenchError
from ..paths import ROOT
from . import tools

TIMEOUT_S = 300.0


def _run(argv: list[str], out: Path, stdin: Path | None, log: Path) -> None:
    try:
        code = procs.run(argv, cwd=ROOT, timeout_s=TIMEOUT_S, stdout_path=out, stdin_path=stdin, stderr_path=log)
    except TimeoutError as exc:
        raise WsbenchError(f"{exc} (log: {log})") from None
    except OSError as exc:
        raise WsbenchError(f"cannot run {argv[0]}: {exc.strerror}") from None
    if code != 0:
        raise WsbenchError(f"{Path(argv[0]).name} exited with code {code} (log: {log})")


def collapse_perf(script_txt: Path, folded: Path, log: Path) -> None:
    """``perf script`` text → folded stacks (``--all``: annotate kernel and JIT frames)."""
    _run([tools.find("inferno-collapse-perf"), "--all", str(script_txt)], folded, None, log)


def svg(folded: Path, out: Path, title: str, log: Path, subtitle: str = "") -> None:
    argv = [tools.find("inferno-flamegraph"), "--title", title, "--minwidth", "0.05"]
    if subtitle:
        argv += ["--subtitle", subtitle]
    _run(argv + [str(folded)], out, None, log)


def diff_svg(before: Path, after: Path, out: Path, title: str, log: Path) -> None:
    """A differential flamegraph: the stacks of ``after``, coloured by how their share
    changed from ``before`` (red: more, blue: less); widths are ``after``'s."""
    with tempfile.TemporaryDirectory(prefix="wsbench-diff-") as tmp:
        diff = Path(tmp) / "diff.folded"
        _run([tools.find("inferno-diff-folded"), "--normalize", str(before), str(after)], diff, None, log)
        _run([tools.find("inferno-flamegraph"), "--title", title, str(diff)], out, None, log)
