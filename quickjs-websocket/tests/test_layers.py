"""scripts/check_layers.py: the module's layers (README.md, "Layers") hold, the rooms keep apart
(wsproto/ includes only itself, loadgen nothing of the module), and the check
finds what breaks them: an upward call, an upward include, a cycle within a layer, a file
with no declared layer."""
import shutil
import subprocess
import sys

import pytest

from qjs_runs import ROOT

SCRIPT = ROOT / "scripts" / "check_layers.py"
SRC = ROOT / "quickjs-websocket" / "src"


def check(*args):
    if not (ROOT / "build" / "prefix" / "include" / "quickjs").is_dir():
        pytest.skip("build/prefix missing (run: make setup)")
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300)


def test_layers_hold():
    r = check()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no cycle, no upward call or include" in r.stdout


def test_planted_violations_are_found(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SRC, src)
    # loop.c (layer loop) calls the state machine (layer state): an upward call
    with open(src / "loop.c", "a") as f:
        f.write("\nstruct sm;\nvoid sm_fail(struct sm *s, int code, const char *reason);\n"
                "void loop_planted(struct sm *s);\n"
                "void loop_planted(struct sm *s)\n{\n    sm_fail(s, 1002, \"planted\");\n}\n")
    # txq.c (layer loop) includes a header of the binding: upward include (and JS below it)
    text = (src / "txq.c").read_text()
    (src / "txq.c").write_text(text.replace('#include "txq.h"', '#include "txq.h"\n#include "jsev.h"', 1))
    # frame.c calls upgrade.c, which calls frame.c: a cycle within the framing layer
    with open(src / "frame.c", "a") as f:
        f.write("\nint upg_wanted(int secure);\nint fr_planted(void);\n"
                "int fr_planted(void)\n{\n    return upg_wanted(0);\n}\n")
    # a file nobody placed
    (src / "extra.c").write_text("int extra_planted(void);\nint extra_planted(void)\n{\n    return 1;\n}\n")

    r = check("--src", str(src), "--no-readme")
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    lines = out.splitlines()
    assert any(l.startswith("upward call:") and "loop.c" in l and "sm.c" in l and "sm_fail" in l
               for l in lines), out
    assert any(l.startswith("upward include:") and "txq.c" in l and "jsev.h" in l for l in lines), out
    # (the upward call closes a cycle too: sm.c calls down into frame.c, which calls loop.c)
    assert any(l.startswith("cycle among") and "frame.c -> upgrade.c (upg_wanted)" in l
               for l in lines), out
    assert any("extra.c: no layer declared" in l for l in lines), out
    # nothing else: the untouched files still pass
    assert len([l for l in lines if l.startswith("upward")]) == 2, out
    assert len(lines) == 4, out


def test_readme_lists_the_same_files(tmp_path):
    readme = tmp_path / "README.md"
    text = (ROOT / "quickjs-websocket" / "README.md").read_text()
    readme.write_text(text.replace("`loop.c`, `txq.c`", "`loop.c`", 1))
    r = check("--readme", str(readme))
    assert r.returncode == 1 and "layer loop lists missing txq.c" in r.stdout, r.stdout + r.stderr


def test_rooms_keep_apart(tmp_path):
    """The wire protocol's room includes only its own headers; the load generator includes
    nothing of the module, by path or by a name only the module has."""
    room = tmp_path / "wsproto"
    shutil.copytree(ROOT / "wsproto", room, ignore=shutil.ignore_patterns("fuzz", "tests"))
    loadgen = tmp_path / "loadgen"
    shutil.copytree(ROOT / "clients" / "loadgen", loadgen, ignore=shutil.ignore_patterns("tests"))
    # a room file that reaches into the module (a header of the transport layer)
    text = (room / "wsclose.c").read_text()
    (room / "wsclose.c").write_text(text.replace('#include "wsclose.h"', '#include "wsclose.h"\n#include "tp.h"', 1))
    # loadgen through a path into the module, and by a name only the module has
    text = (loadgen / "conn.c").read_text()
    (loadgen / "conn.c").write_text(text.replace(
        '#include "conn.h"', '#include "conn.h"\n#include "../../quickjs-websocket/src/txq.h"\n#include "sm.h"', 1))

    r = check("--room", str(room), "--loadgen", str(loadgen), "--no-readme")
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    lines = out.splitlines()
    assert any(l.startswith("wsproto/wsclose.c includes \"tp.h\"") for l in lines), out
    assert any(l.startswith("loadgen: conn.c includes \"../../quickjs-websocket/src/txq.h\": nothing of "
                            "quickjs-websocket") for l in lines), out
    assert any(l.startswith("loadgen: conn.c includes \"sm.h\": neither its own header nor the room's")
               for l in lines), out
    # (the module's tp.h as a room header: also an upward include of the pure layer)
    assert len(lines) == 4, out
