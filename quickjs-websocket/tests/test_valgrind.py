"""valgrind memcheck: a 10,000-message loop must leak nothing and leave the pool full."""
import re
import shutil

import pytest

from qjsws_testkit import run_qjs


@pytest.mark.parametrize("variant_env", [{}, {"QJSWS_DISABLE": "all"}], ids=["optimized", "baseline"])
def test_valgrind_no_leaks(peer_factory, tmp_path, variant_env):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    peer = peer_factory("python")
    log = tmp_path / "vg.log"
    wrapper = ["valgrind", "--tool=memcheck", "--leak-check=full", "--errors-for-leak-kinds=definite",
               "--log-file=%s" % log]
    res = run_qjs("leak", peer.url, 10000, env_extra=variant_env, timeout=600, wrapper=wrapper)
    assert res["got"] == 10000 and res["bad"] == 0, res
    assert res["pool"]["free"] == res["pool"]["blocks"], res["pool"]
    text = log.read_text()
    m = re.search(r"definitely lost: ([\d,]+) bytes", text)
    if m is None:
        assert "All heap blocks were freed" in text or "definitely lost" not in text, text[-3000:]
    else:
        assert m.group(1) == "0", text[-3000:]
    assert "Invalid read" not in text and "Invalid write" not in text, text[-5000:]
