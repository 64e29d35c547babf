"""The one check behind every package's fuzz test (wsproto, lws-echo):
replay a target's committed inputs (seeds and regression inputs), then a short fresh run
from its seeds (WSBENCH_FUZZ_TEST_SECONDS, default 10), through scripts/fuzz.py check.
Long runs: make fuzz."""
import importlib.util
import os
import re
import subprocess
import sys
from types import ModuleType

from . import ROOT

SCRIPT = ROOT / "scripts" / "fuzz.py"
SECONDS = int(os.environ.get("WSBENCH_FUZZ_TEST_SECONDS", "10"))


def check_target(target: str) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), "check", "--targets", target, "--seconds", str(SECONDS)],
                       capture_output=True, text=True, timeout=SECONDS + 900)
    assert r.returncode == 0, r.stdout + r.stderr[-6000:]
    replayed, fresh = [l for l in r.stdout.splitlines() if l.startswith("fuzz ")]
    assert int(re.search(r"(\d+) executed", replayed).group(1)) > 0, replayed
    assert "crashes=0" in replayed and "crashes=0" in fresh, r.stdout
    assert int(re.search(r"executions=(\d+)", fresh).group(1)) > 0, fresh


def fuzz_script() -> ModuleType:
    """scripts/fuzz.py as a module (its TARGETS: what every fuzz target is built from)."""
    spec = importlib.util.spec_from_file_location("fuzz", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz", module)
    spec.loader.exec_module(module)
    return module
