"""A child the harness started does not outlive the harness, even when the harness is
killed by SIGKILL (its cleanup never runs)."""
import os
import signal
import subprocess
import sys
import time

SCRIPT = r"""
import sys
from pathlib import Path
from wsbench import procs
p = procs.spawn([sys.executable, "-c", "import time; time.sleep(60)"], Path("."))
print(p.pid, flush=True)
time.sleep(60)
"""


def test_spawned_child_dies_with_a_killed_harness() -> None:
    harness = subprocess.Popen([sys.executable, "-c", "import time\n" + SCRIPT], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        child = int(harness.stdout.readline())
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait(timeout=5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{child}/stat") as f:  # a zombie waiting for init counts as gone
                if f.read().split(") ", 1)[1].startswith("Z"):
                    break
            time.sleep(0.05)
        else:
            os.killpg(child, signal.SIGKILL)
            raise AssertionError("the child outlived the harness")
    finally:
        if harness.poll() is None:
            os.killpg(harness.pid, signal.SIGKILL)
