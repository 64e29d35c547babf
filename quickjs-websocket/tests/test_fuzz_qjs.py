"""libFuzzer targets for the QuickJS module's parsers (quickjs-websocket/fuzz/): every committed input
(seeds and regression inputs) once, then a short fresh run from the seeds
(WSBENCH_FUZZ_TEST_SECONDS each, default 10), via scripts/fuzz.py check.  Long runs:
make fuzz."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECONDS = int(os.environ.get("WSBENCH_FUZZ_TEST_SECONDS", "10"))


@pytest.mark.parametrize("target", ["qjs_frames", "qjs_roundtrip", "qjs_utf8", "qjs_url"])
def test_fuzz_target(target):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "fuzz.py"), "check",
                        "--targets", target, "--seconds", str(SECONDS)],
                       capture_output=True, text=True, timeout=SECONDS + 900)
    assert r.returncode == 0, r.stdout + r.stderr[-6000:]
    replayed, fresh = [l for l in r.stdout.splitlines() if l.startswith("fuzz ")]
    assert int(re.search(r"(\d+) executed", replayed).group(1)) > 0, replayed
    assert "crashes=0" in replayed and "crashes=0" in fresh, r.stdout
    assert int(re.search(r"executions=(\d+)", fresh).group(1)) > 0, fresh
