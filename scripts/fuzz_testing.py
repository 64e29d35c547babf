"""The one check behind every package's fuzz test (wsproto, loadgen, lws-echo):
replay a target's committed inputs (seeds and regression inputs), then a short fresh run
from its seeds (WSBENCH_FUZZ_TEST_SECONDS, default 10), through scripts/fuzz.py check.
Long runs: make fuzz."""
import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "fuzz.py"
SECONDS = int(os.environ.get("WSBENCH_FUZZ_TEST_SECONDS", "10"))


def check_target(target: str) -> None:
    r = subprocess.run([sys.executable, str(SCRIPT), "check", "--targets", target, "--seconds", str(SECONDS)],
                       capture_output=True, text=True, timeout=SECONDS + 900)
    assert r.returncode == 0, r.stdout + r.stderr[-6000:]
    replayed, fresh = [l for l in r.stdout.splitlines() if l.startswith("fuzz ")]
    assert int(re.search(r"(\d+) executed", replayed).group(1)) > 0, replayed
    assert "crashes=0" in replayed and "crashes=0" in fresh, r.stdout
    assert int(re.search(r"executions=(\d+)", fresh).group(1)) > 0, fresh
