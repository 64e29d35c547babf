"""The server images copy what their servers import: each JavaScript server's relative
imports (and theirs) against the COPY lines of the Dockerfile stage that runs it. Without
an engine, in a second: twice a new shared file (wsproto/, servers/deflate.mjs) was left
out of an image, and only the image test, which needs Docker and minutes, saw it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wsbench_runs import ROOT

DOCKERFILE = ROOT / "docker" / "Dockerfile"


def stages(text: str) -> dict[str, str]:
    """Each stage's lines by its name (``FROM base AS name``), its parent stage's first."""
    out: dict[str, str] = {}
    for part in re.split(r"(?m)^FROM ", text)[1:]:
        head, _, body = part.partition("\n")
        base, _, name = head.partition(" AS ")
        out[name.strip()] = out.get(base.strip(), "") + body
    return out


def relative_imports(entry: Path) -> set[Path]:
    """The files ``entry`` imports by a relative path, and the files those import."""
    found: set[Path] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        for spec in re.findall(r"""^import\b[^;]*?from\s+['"](\.{1,2}/[^'"]+)['"]""", module.read_text(), re.M):
            path = (module.parent / spec).resolve()
            if path not in found:
                found.add(path)
                todo.append(path)
    return found


def copied(stage: str) -> list[Path]:
    """What a stage copies from the build context (not ``--from=`` another stage)."""
    paths = []
    for line in stage.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from=") for w in words):
            paths += [(ROOT / w).resolve() for w in words[1:-1]]
    return paths


@pytest.mark.parametrize("stage", ["node-ws", "node-ws-native", "bun", "deno"])
def test_a_server_image_copies_every_file_its_server_imports(stage: str) -> None:
    text = stages(DOCKERFILE.read_text())[stage]
    entry = re.search(r"ENTRYPOINT \[.*\"(servers/[^\"]+)\"\]", text)
    assert entry, f"stage {stage}: no ENTRYPOINT running a file of servers/"
    have = copied(text)
    missing = [p for p in relative_imports(ROOT / entry.group(1))
               if not any(p == c or c in p.parents for c in have)]
    assert not missing, f"stage {stage} does not copy {[str(p.relative_to(ROOT)) for p in missing]}"
