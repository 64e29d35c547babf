"""Loading TOML files with errors that name the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import WsbenchError
from .paths import relative


def load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise WsbenchError(f"{relative(path)}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise WsbenchError(f"{relative(path)}: malformed TOML: {exc}") from None


def check_keys(where: str, table: dict[str, Any], required: set[str], optional: set[str]) -> None:
    missing = sorted(required - table.keys())
    if missing:
        raise WsbenchError(f"{where}: missing key {', '.join(missing)}")
    unknown = sorted(table.keys() - required - optional)
    if unknown:
        raise WsbenchError(f"{where}: unknown key {', '.join(unknown)}")


def expect(where: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise WsbenchError(f"{where}: {what} must be {_kind_name(kind)}, got {value!r}")
    return value


def strings(where: str, value: Any, what: str, allow_empty: bool = True) -> list[str]:
    """A list of strings (the names, commands and features of the TOML files)."""
    expect(where, value, list, what)
    if not value and not allow_empty:
        raise WsbenchError(f"{where}: {what} must not be empty")
    for item in value:
        expect(where, item, str, f"every item of {what}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {int: "an integer", str: "a string", list: "a list", float: "a number",
             bool: "true or false", dict: "a table"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)
