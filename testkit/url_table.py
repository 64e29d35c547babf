"""What the URL tests share (wsproto/tests/test_url_reference.py, the room's parser;
clients/loadgen/tests/test_loadgen_url.py, loadgen's --url): Node's WHATWG URL verdicts on
the committed table (wsproto/fuzz/url/reference.json, written by reference.mjs from
cases.jsonl), and the C drivers' plumbing: a driver reads one URL per line, hex-encoded, and
writes one line per URL (wsproto/tests/c/hexlines.h)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from . import ROOT
TABLE = ROOT / "wsproto" / "fuzz" / "url" / "reference.json"


def node_cases() -> list[dict]:
    """[{"input", "node": {"accept", "secure", "host", "port", "path"}, "differs": why or ""}]"""
    return json.loads(TABLE.read_text())["cases"]


def build_driver(exe: Path, sources: list[Path], libs: tuple[str, ...] = ()) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("cc missing")
    subprocess.run([cc, "-O1", "-g", "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                    "-I", str(ROOT / "wsproto"), "-o", str(exe), *map(str, sources), *libs], check=True)
    return exe


def answers(driver: Path, inputs: list[str]) -> list[str]:
    """the driver's line for each input"""
    out = subprocess.run([str(driver)], input="".join(s.encode().hex() + "\n" for s in inputs),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(inputs)
    return out


def unhex(h: str) -> str:
    return "" if h == "-" else bytes.fromhex(h).decode("utf-8", "replace")
