"""ws with and without its bufferutil add-on (clients/README.md, "ws and its add-ons"):
the node-ws-native rows load it and the node-ws rows do not, by what ws itself loaded
(servers/ws-info.mjs), as client and as server; a row whose report differs from its
catalog entry fails with one line; and on Node 20 ws validates UTF-8 with buffer.isUtf8,
so utf-8-validate would never be loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wsbench.catalog import load_catalog
from wsbench.server import RunningServer, start_server

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
NODE20 = ROOT / "node_modules/node20/bin/node"
PY = sys.executable
ENV = {k: v for k, v in os.environ.items() if k not in ("WSBENCH_HOLD", "WS_NO_BUFFER_UTIL", "WS_NO_UTF_8_VALIDATE")}
ADDON = "node_modules/bufferutil/prebuilds/linux-x64/bufferutil.node"

pytestmark = pytest.mark.skipif(not (ROOT / "node_modules/bufferutil/package.json").exists()
                                or not (ROOT / "build/bin/lws-echo").exists(),
                                reason="node_modules/bufferutil or lws-echo missing (make setup)")


def client_run(name: str, url: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    program = CATALOG.clients[name]
    proc = subprocess.run([*program.command, "--url", url, "--type", "binary", "--size", "4096", "--count", "200",
                           "--warmup", "20"], cwd=ROOT, env={**ENV, **(program.env if env is None else env)},
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stderr[-500:]
    return dict(json.loads(lines[-1]))


@pytest.mark.parametrize("name, loaded", [("node-ws-native", True), ("node-ws", False)])
def test_the_client_says_whether_ws_masks_with_the_addon(lws: RunningServer, name: str, loaded: bool) -> None:
    ws = client_run(name, lws.url())["ws"]
    assert ws["version"] == "8.23.0" and ws["bufferutil"] is loaded
    if loaded:
        assert (ws["mask"], ws["addon"], ws["bufferutil_version"]) == ("bufferutil", ADDON, "4.1.0")
    else:
        assert (ws["mask"], ws["addon"], ws["bufferutil_version"]) == ("js", None, None)
    assert CATALOG.clients[name].unmet({"ws": ws}, "result line") is None


@pytest.mark.parametrize("name, loaded", [("node-ws-native", True), ("node-ws", False)])
def test_the_server_says_it_in_its_info_line(tmp_path: Path, name: str, loaded: bool) -> None:
    server = start_server(CATALOG.servers[name], tmp_path)
    try:
        assert server.info is not None and server.info["ws"]["bufferutil"] is loaded
        assert server.info["ws"]["addon"] == (ADDON if loaded else None)
    finally:
        server.stop()


def test_a_native_row_whose_addon_did_not_load_fails_its_sample_with_one_line(lws: RunningServer) -> None:
    """The catalog says node-ws-native; the process ran ws without the add-on (here:
    WS_NO_BUFFER_UTIL set by someone): the result line gives it away."""
    reported = client_run("node-ws-native", lws.url(), env={"WS_NO_BUFFER_UTIL": "1"})
    unmet = CATALOG.clients["node-ws-native"].unmet(reported, "result line")
    assert unmet == "its result line says ws.bufferutil = false, harness/runtimes.toml expects true"
    assert CATALOG.clients["node-ws-native"].unmet({"messages": 1}, "result line") == (
        "its result line does not say ws.bufferutil (harness/runtimes.toml expects ws.bufferutil = true)")


def mismatched_catalog(tmp_path: Path) -> Path:
    """runtimes.toml with the native rows run as the pure ones are (WS_NO_BUFFER_UTIL=1)."""
    text = (ROOT / "harness/runtimes.toml").read_text()
    for side in ("servers", "clients"):
        head = f"[{side}.node-ws-native]\n"
        assert head in text
        text = text.replace(head, head + 'env = { WS_NO_BUFFER_UTIL = "1" }\n')
    path = tmp_path / "runtimes.toml"
    path.write_text(text)
    return path


def test_a_mismatched_row_fails_its_server_and_its_cells_in_a_run(tmp_path: Path) -> None:
    catalog = mismatched_catalog(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run([PY, "-m", "wsbench", "--catalog", str(catalog), "run", "-w", "bin_4k", "-s", "node-ws-native",
                           "-s", "lws", "-c", "node-ws-native", "-n", "1", "--min-seconds", "0", "--out", str(out)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    run = json.loads(next(out.glob("run-*.json")).read_text())
    server = run["servers"]["node-ws-native"]
    assert server["status"] == "failed" and server["error"] == (
        "is not what the catalog says: its WSBENCH-INFO line says ws.bufferutil = false, harness/runtimes.toml "
        "expects true")
    assert server["info"]["ws"]["bufferutil"] is False and server["expect"] == {"ws.bufferutil": True}
    cell = next(c for c in run["cells"] if c["server"] == "lws")
    assert cell["status"] == "failed" and cell["errors"] == [
        "client 'node-ws-native' vs server 'lws' on 'bin_4k': its result line says ws.bufferutil = false, "
        "harness/runtimes.toml expects true"]


def node20(script: str) -> Any:
    proc = subprocess.run([str(NODE20), "--input-type=module", "-e", script], cwd=ROOT / "clients", env=ENV,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_ws_validates_utf8_with_buffer_is_utf8_on_node_20_so_utf8_validate_is_never_loaded() -> None:
    """ws 8.23's lib/validation.js takes buffer.isUtf8 whenever Node has it (Node 18.14 and
    later) and only otherwise tries require('utf-8-validate'): on our Node 20 the add-on
    would not be loaded even if it were installed (it is not)."""
    info = node20("import WebSocket from 'ws'; import { wsInfo } from '../servers/ws-info.mjs';"
                  "import { isUtf8 } from 'node:buffer';"
                  "console.log(JSON.stringify({...wsInfo(), node: process.version, isUtf8: typeof isUtf8}))")
    assert info["node"].startswith("v20.") and info["isUtf8"] == "function"
    assert info["utf8"] == "buffer.isUtf8" and info["utf8_validate_loaded"] is False
    validation = (ROOT / "node_modules/ws/lib/validation.js").read_text()
    assert "if (isUtf8) {" in validation and "require('utf-8-validate')" in validation
    assert validation.index("if (isUtf8) {") < validation.index("require('utf-8-validate')")
    assert not (ROOT / "node_modules/utf-8-validate").exists()
