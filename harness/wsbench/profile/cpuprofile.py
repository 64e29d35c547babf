"""Chrome ``.cpuprofile`` files (``--cpu-prof`` of Node, Deno and Bun) as folded stacks,
the input of inferno-flamegraph: one ``root;...;leaf count`` line per distinct stack.

The format: ``nodes`` (each with ``id``, ``callFrame`` — ``functionName``, ``url``,
``lineNumber`` (0-based) — and ``children`` ids), ``samples`` (the node id of each sample)
and ``timeDeltas``. A sample counts once; the profile's own ``(root)`` is left out, and
``(program)``, ``(idle)`` and ``(garbage collector)`` stay as V8/JSC name them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any


class CpuProfileError(ValueError):
    """Not a .cpuprofile (the message is one line)."""


def _name(frame: dict[str, Any]) -> str:
    name = frame.get("functionName") or "(anonymous)"
    url = str(frame.get("url") or "")
    if not url:
        return name
    where = url.rsplit("/", 1)[-1]
    line = frame.get("lineNumber")
    if isinstance(line, int) and line >= 0:
        where += f":{line + 1}"
    return f"{name} {where}"


def folded(profile: dict[str, Any]) -> list[str]:
    try:
        nodes = {n["id"]: n for n in profile["nodes"]}
        parent: dict[int, int] = {}
        for n in profile["nodes"]:
            for child in n.get("children", []):
                parent[child] = n["id"]
        counts = Counter(profile["samples"])
    except (KeyError, TypeError) as exc:
        raise CpuProfileError(f"not a .cpuprofile (missing {exc})") from None
    stacks: Counter[str] = Counter()
    for node_id, count in counts.items():
        names = []
        current: int | None = node_id
        while current is not None and current in nodes:
            frame = nodes[current].get("callFrame", {})
            if frame.get("functionName") != "(root)":
                names.append(_name(frame).replace(";", ":"))
            current = parent.get(current)
        if names:
            stacks[";".join(reversed(names))] += count
    return [f"{stack} {count}" for stack, count in sorted(stacks.items())]


def read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CpuProfileError(f"{path.name}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CpuProfileError(f"{path.name}: not a .cpuprofile")
    return data
