"""k6 as a client (clients/README.md, "k6"): the adapter runs the shared workload and the
harness reads its result through the HTTP barrier, which holds k6 until GO and through
the end readings; a failed run exits non-zero with its error line; k6's send() keeps a
reference to a binary message's buffer (why the adapter sends a copy); the send queue's
cost per message grows with the burst; and wsbench conformance has a k6 column."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wsbench import measure
from wsbench.hold import HttpHold
from wsbench.catalog import load_catalog
from wsbench.model import Settings
from wsbench.server import RunningServer
from wsbench.workloads import load_workloads

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
K6 = ROOT / "build/tools/k6/k6"
ENV = {k: v for k, v in os.environ.items() if k not in ("WSBENCH_HOLD", "WSBENCH_HOLD_URL")}

pytestmark = pytest.mark.skipif(not K6.exists() or not (ROOT / "build/bin/lws-echo").exists(),
                                reason="build/tools/k6/k6 or lws-echo missing (make setup builds both)")


class Watch:
    """The harness's monotonic time when the start readings and the end readings are taken."""

    def __init__(self) -> None:
        self.started_at = self.ended_at = 0.0

    def spawned(self, pid: int) -> str | None:
        return None

    def started(self) -> str | None:
        import time
        time.sleep(0.5)  # k6 must still be waiting for GO
        self.started_at = time.monotonic()
        return None

    def ended(self) -> str | None:
        import time
        self.ended_at = time.monotonic()
        return None


# text_11 and bin_4k, shortened
SHORT = {"text_11": {"count": 2000, "warmup": 200}, "bin_4k": {"count": 500, "warmup": 50}}


@pytest.mark.parametrize("name", list(SHORT))
def test_the_harness_measures_k6_through_its_http_barrier(lws: RunningServer, tmp_path: Path, name: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    barriers: list[HttpHold] = []

    def keep(mode: str) -> HttpHold:
        assert mode == "http"
        barriers.append(HttpHold())
        return barriers[-1]

    monkeypatch.setattr(measure, "hold_for", keep)
    (tmp_path / "logs").mkdir()
    watch = Watch()
    sample = measure.run_client(CATALOG.clients["k6"], lws, load_workloads().workloads[name], 1, tmp_path / "logs",
                                Settings(min_seconds=0), override=SHORT[name], observer=watch)
    assert sample.ok, sample.error
    assert sample.messages and sample.extra["checked"] == sample.messages and sample.exit_code == 0
    assert sample.client_cpu_method == "clock" and sample.client_cpu_s and sample.client_cpu_s > 0
    [barrier] = barriers
    assert barrier.asked == ["go", "hold"]  # k6 waited at GO and held after its result
    assert barrier.answered["go"] >= watch.started_at  # GO only after the start readings
    assert barrier.answered["hold"] >= watch.ended_at  # alive until the end readings were taken
    assert sample.barrier_s is not None and sample.barrier_s >= 0.5


def k6_script(script: str, url: str, **env: str) -> dict[str, Any]:
    args = [a for k, v in {"URL": url, **env}.items() for a in ("-e", f"{k}={v}")]
    proc = subprocess.run([str(K6), "run", "--no-usage-report", "-q", "--log-output=stdout", "--log-format=raw",
                           "--summary-mode=disabled", *args, str(ROOT / "clients/k6" / script)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stdout[-500:] + proc.stderr[-500:]
    return dict(json.loads(lines[-1]))


def test_a_failed_run_exits_non_zero_with_its_error_line(lws: RunningServer) -> None:
    proc = subprocess.run([*CATALOG.clients["k6"].command, "--url", lws.url(), "--type", "text", "--size", "11"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 108 and lines, proc.stdout[-500:]  # exec.test.abort: k6's own non-zero code
    error = json.loads(lines[0])["error"]
    assert error.startswith("missing --count"), error
    assert measure._judge("c", measure.parse_result(lines[0]), proc.returncode, Path("log"), "") == f"c: {error}"[:303]


def test_k6_sends_the_buffer_as_it_is_at_write_time_not_as_it_was_at_send(lws: RunningServer) -> None:
    """The reason the adapter hands send() a copy (clients/k6.mjs): without one, the echoes
    carry later numbers than were sent."""
    shared = k6_script("send-aliasing.js", lws.url(), N="500")
    assert shared["wrong"] > 0 and shared["first_wrong"][1] > shared["first_wrong"][0], shared
    copied = k6_script("send-aliasing.js", lws.url(), N="500", COPY="1")
    assert copied["wrong"] == 0, copied


def test_the_send_queue_costs_more_per_message_the_longer_the_burst(lws: RunningServer) -> None:
    """docs/k6.md: k6's send queue drops each written message by copying the rest, so a
    long burst costs more per message than a short one (best of 2 rounds each)."""
    short = k6_script("send-queue.js", lws.url(), BURST="1000", ROUNDS="2")
    long = k6_script("send-queue.js", lws.url(), BURST="40000", ROUNDS="2")
    assert long["us_per_msg"] > 1.5 * short["us_per_msg"], (short, long)


def test_conformance_has_a_k6_column(tmp_path: Path) -> None:
    cases = ["3-rsv1-text", "6-valid-one-to-four", "6-invalid-byte-ff", "7-close-code-3000"]
    proc = subprocess.run([sys.executable, "-m", "wsbench", "conformance", "-c", "k6", "--out", str(tmp_path), "-q",
                           *(a for c in cases for a in ("--case", c))], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    [path] = tmp_path.glob("conformance-*.json")
    verdicts = json.loads(path.read_text())["conformance"]["verdicts"]["k6"]
    got = {case: v["verdict"] for case, v in verdicts.items()}
    assert got == {"3-rsv1-text": "strict", "6-valid-one-to-four": "strict", "6-invalid-byte-ff": "fail", "7-close-code-3000": "strict"}
    assert "delivered text" in verdicts["6-invalid-byte-ff"]["detail"]  # k6 turns invalid UTF-8 into U+FFFD
