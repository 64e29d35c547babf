"""The load generator's --url check against Node's WHATWG URL, on the committed reference
table (wsproto/fuzz/url/reference.json, written by reference.mjs from cases.jsonl; the
room's URL parser on the same table: wsproto/tests/test_url_reference.py)."""
import ipaddress
import json
import shutil
import subprocess

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TABLE = ROOT / "wsproto" / "fuzz" / "url" / "reference.json"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("cc missing")
    exe = tmp_path_factory.mktemp("url") / "url_table"
    lg = ROOT / "clients" / "loadgen"
    subprocess.run([cc, "-O1", "-g", "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                    "-I", str(ROOT / "wsproto"), "-o", str(exe), str(HERE / "c" / "url_table.c"),
                    str(ROOT / "wsproto" / "url_core.c"), str(ROOT / "wsproto" / "handshake_core.c"),
                    str(lg / "http.c"), str(lg / "util.c"), "-lcrypto"], check=True)
    return exe


def parse(side):
    f = side.split()
    if f[0] == "bad":
        return {"accept": False}
    unhex = lambda h: "" if h == "-" else bytes.fromhex(h).decode("utf-8", "replace")
    return {"accept": True, "secure": f[1] == "1", "port": int(f[2]), "host": unhex(f[3]),
            "path": unhex(f[4])}


def results(driver, inputs):
    out = subprocess.run([str(driver)], input="".join(s.encode().hex() + "\n" for s in inputs),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(inputs)
    return [tuple(parse(side) for side in line.split(" | ")) for line in out]


def reachable_by_loadgen(case):
    node = case["node"]
    if not node["accept"] or node["secure"] or node["port"] == 0 or case["differs"]:
        return False
    if not case["input"].lower().startswith("ws://") or case["input"] != case["input"].strip():
        return False
    if node["host"] == "localhost":
        return True
    try:
        return isinstance(ipaddress.ip_address(node["host"]), ipaddress.IPv4Address)
    except ValueError:
        return False


def test_loadgen_agrees_with_node(driver):
    table = json.loads(TABLE.read_text())["cases"]
    got = results(driver, [c["input"] for c in table])
    wrong = []
    for case, (_, lg) in zip(table, got):
        if case["differs"]:
            continue  # the documented differences are the module's and loadgen's alike
        if lg["accept"]:
            node = case["node"]
            if not node["accept"] or (lg["host"].lower(), lg["port"], lg["path"]) != (
                    node["host"], node["port"], node["path"]):
                wrong.append("%r: loadgen %s, Node %s" % (case["input"], lg, node))
        elif reachable_by_loadgen(case):
            wrong.append("%r: loadgen rejects, Node %s" % (case["input"], case["node"]))
    assert not wrong, "\n".join(wrong)
