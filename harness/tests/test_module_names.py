"""One name per role: no two modules of the harness share a base name, so a search for a
concept's file lands in one place (the package ``__init__``s, and the one module per
subcommand of ``commands/``, which is named after its subcommand, aside)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import wsbench

PACKAGE = Path(wsbench.__file__).parent


def test_no_two_modules_share_a_base_name() -> None:
    places: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        where = path.relative_to(PACKAGE)
        if path.name == "__init__.py" or where.parts[0] == "commands":
            continue
        places[path.name].append(str(where))
    shared = {name: sorted(paths) for name, paths in places.items() if len(paths) > 1}
    assert not shared, f"modules sharing a base name: {shared}"


def test_every_subcommand_has_its_module() -> None:
    """The exception above covers exactly the subcommands' modules."""
    from wsbench.cli import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices  # noqa: SLF001
    modules = {p.stem for p in (PACKAGE / "commands").glob("*.py") if p.name != "__init__.py"}
    assert modules == set(subcommands)
