"""The external tools profiling needs, found or reported missing in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import WsbenchError
from ..paths import ROOT

# Where scripts/setup-profile.sh installs inferno (cargo install --root build/tools/inferno).
INFERNO_BIN = ROOT / "build" / "tools" / "inferno" / "bin"
INFERNO_INSTALL = "make setup (it runs: cargo install inferno --version 0.12.3 --root build/tools/inferno)"

HOW = {
    "perf": "apt-get install linux-perf (or: make setup)",
    "hyperfine": "apt-get install hyperfine (or: make setup)",
}


def inferno_dir() -> Path:
    """WSBENCH_INFERNO_DIR overrides where inferno is looked for first (tests use it)."""
    return Path(os.environ.get("WSBENCH_INFERNO_DIR", str(INFERNO_BIN)))


def find(tool: str) -> str:
    """The path of ``tool``, or a WsbenchError naming what to install."""
    if tool.startswith("inferno-"):
        local = inferno_dir() / tool
        if local.is_file() and os.access(local, os.X_OK):
            return str(local)
        found = shutil.which(tool)
        if found:
            return found
        raise WsbenchError(f"{tool} is not installed; install inferno: {INFERNO_INSTALL}")
    found = shutil.which(tool)
    if found:
        return found
    raise WsbenchError(f"{tool} is not installed; install it: {HOW.get(tool, 'make setup')}")


def require(*tools: str) -> dict[str, str]:
    """Every tool's path, checked before anything is started."""
    return {t: find(t) for t in tools}


PROFILE_TOOLS = ("perf", "inferno-collapse-perf", "inferno-flamegraph")
