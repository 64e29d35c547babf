"""One module per subcommand of ``wsbench`` (cli.py parses the arguments, then calls the
module's ``main(args, argv)``, which returns the exit code):

run, list, verify, report, compare, stability, merge, conformance, profile, startup, gate,
history and docker. What they share is here: recording a run's results and printing its tables,
and writing and rendering files with their errors as one line.

Layering: commands import the harness's modules; no module outside ``commands`` and the
CLI imports them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import WsbenchError
from ..paths import ReportFiles, relative
from ..model import Run, write_json

EXIT_FAILED = 1  # a cell, client, server or check failed; the rest was measured

T = TypeVar("T")


def measure_and_record(run: Run, files: ReportFiles, measure: Callable[[], object],
                       printed: Callable[[Run], str]) -> None:
    """``measure`` the run (it writes the run file, ``files.json``, as it goes: after every
    repetition, without the summaries), then write the run file with its summaries and the
    tables beside it (``files.md``), and print the tables; also after Ctrl-C, which is
    raised again afterwards."""
    interrupted = False
    try:
        measure()
    except KeyboardInterrupt:
        interrupted = True
    write_json(run, files.json)
    text = printed(run)
    files.md.write_text(text)
    print(text)
    print(f"results: {relative(files.json)} and {relative(files.md)}", file=sys.stderr)
    if interrupted:
        raise KeyboardInterrupt


def any_failure(run: Run) -> bool:
    return any(c.status not in ("ok", "n/a") for c in run.cells)


def rendered(make: Callable[[], T], path: Path) -> T:
    """What ``make`` renders from a run file, with a run file whose values do not fit
    (a field of the wrong type, a number that is not one) reported as one line."""
    try:
        return make()
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as exc:
        raise WsbenchError(f"{path}: malformed run file ({type(exc).__name__}: {exc})") from None


def write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as exc:
        raise WsbenchError(f"{path}: cannot write ({exc.strerror})") from None
    print(f"wsbench: wrote {relative(path)}", file=sys.stderr)
