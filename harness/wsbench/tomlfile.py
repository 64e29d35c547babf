"""TOML files read into typed, frozen records, with one-line errors that name the file,
the table, the key and the value.

A record declares the keys of its table on its own fields: a field whose metadata holds a
``Key`` (made by ``key()``) is read from the key of its name (or ``Key.name``), checked
against the field's annotation, and is required where the field has no default; fields
without one are not read from the file. ``read`` is the one generic checker: unknown and
missing keys, then every declared key in the order of the fields. What the annotations
say:

- ``str``, ``bool``, ``int``: that type (``Key.choices``, ``Key.minimum`` narrow it);
- ``float``: any number, taken as a float;
- ``tuple[str, ...]``, ``tuple[int, ...]``: a list of those (``Key.nonempty``);
- ``dict[str, str]``: a table of strings (``Key.coerce``: of anything, taken as text);
- another record: a table read by the same rules, named ``file: entry: key``;
- ``X | None``: X when the key is there.

This is dataclasses with one checker rather than a validation library (msgspec, pydantic):
the records stay the plain frozen dataclasses the harness passes around, the messages stay
exactly ours (a library words its own), and nothing is added to what ``make setup``
installs. ``Key.check`` adds what a type cannot say (a path that must start with ``/``).
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from .errors import WsbenchError
from .paths import relative

T = TypeVar("T")
Check = Callable[[str, Any, str], Any]  # (where, value, what) -> the value, or a WsbenchError


def load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise WsbenchError(f"{relative(path)}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise WsbenchError(f"{relative(path)}: malformed TOML: {exc}") from None


@dataclass(frozen=True)
class Key:
    """How one key of a table is read (a record field's metadata, or a table of its own)."""

    name: str | None = None  # the key, where it is not the field's name
    nonempty: bool = False  # a list that must not be empty
    choices: tuple[str, ...] = ()  # the strings it may be
    minimum: int | None = None  # integers (and every one of a list of them): the least allowed
    coerce: bool = False  # a table whose keys and values are taken as text, unchecked
    check: Check | None = None  # what a type cannot say, after the type's own checks
    type: Any = None  # a key read outside a record: its annotation
    required: bool = False  # a key read outside a record: whether it must be there


def key(default: Any = MISSING, *, default_factory: Any = MISSING, **spec: Any) -> Any:
    """A record field read from the file (required unless it has a default)."""
    return field(default=default, default_factory=default_factory, metadata={"toml": Key(**spec)})


def keys(cls: type) -> list[tuple[dataclasses.Field[Any], Key]]:
    """The fields of ``cls`` read from a file, in the order they are checked."""
    return [(f, f.metadata["toml"]) for f in dataclasses.fields(cls) if "toml" in f.metadata]


def read(where: str, table: Any, cls: type, what: str = "the entry", extra: dict[str, Key] | None = None,
         ) -> dict[str, Any]:
    """The values of ``cls``'s declared keys found in ``table`` (absent ones are left to
    the field's default), and of the ``extra`` keys read beside them."""
    expect(where, table, dict, what)
    declared = keys(cls)
    hints = typing.get_type_hints(cls)
    wanted = {(k.name or f.name): k.required or (f.default is MISSING and f.default_factory is MISSING)
              for f, k in declared}
    wanted.update({name: k.required for name, k in (extra or {}).items()})
    check_keys(where, table, {n for n, req in wanted.items() if req}, {n for n, req in wanted.items() if not req})
    out = {}
    for f, k in declared:
        name = k.name or f.name
        if name in table:
            out[f.name] = value(where, table[name], hints[f.name], name, k)
    for name, k in (extra or {}).items():
        if name in table:
            out[name] = value(where, table[name], k.type, name, k)
    return out


def value(where: str, raw: Any, annotation: Any, what: str, spec: Key = Key()) -> Any:
    """One value checked against its annotation (module docstring), then ``spec.check``."""
    kind = _optional(annotation)
    if kind is Any:
        got = raw
    elif dataclasses.is_dataclass(kind):
        got = kind(**read(f"{where}: {what}", expect(where, raw, dict, what), kind))  # type: ignore[operator,arg-type]
    elif typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        items = expect(where, raw, list, what)
        if spec.nonempty and not items:
            raise WsbenchError(f"{where}: {what} must not be empty")
        if item is int:
            got = tuple(_int(where, n, f"every one of {what}", spec.minimum) for n in items)
        else:
            got = tuple(expect(where, s, str, f"every item of {what}") for s in items)
    elif typing.get_origin(kind) is dict:
        table = expect(where, raw, dict, what)
        got = ({str(k): str(v) for k, v in table.items()} if spec.coerce else
               {str(k): expect(where, v, str, f"{what}.{k}") for k, v in table.items()}
               if typing.get_args(kind)[1] is str else dict(table))
    elif kind is float:
        got = float(expect(where, raw, (int, float), what))
    elif kind is int:
        got = _int(where, raw, what, spec.minimum)
    else:
        got = expect(where, raw, kind, what)
        if spec.choices and got not in spec.choices:
            raise WsbenchError(f"{where}: {what} must be one of {', '.join(spec.choices)}, got '{got}'")
    return spec.check(where, got, what) if spec.check else got


def _optional(annotation: Any) -> Any:
    """X of ``X | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _int(where: str, raw: Any, what: str, minimum: int | None) -> int:
    expect(where, raw, int, what)
    if minimum is not None and raw < minimum:
        bound = {0: "non-negative", 1: "positive"}.get(minimum, f"at least {minimum}")
        raise WsbenchError(f"{where}: {what} must be {bound}, got {raw}")
    return int(raw)


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


def tables(where: str, data: dict[str, Any], name: str) -> dict[str, Any]:
    """A table of named entries (``[servers.NAME]``)."""
    return expect(where, data.get(name, {}), dict, name)  # type: ignore[no-any-return]


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {int: "an integer", str: "a string", list: "a list", float: "a number",
             bool: "true or false", dict: "a table"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)
