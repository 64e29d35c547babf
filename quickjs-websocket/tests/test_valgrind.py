"""valgrind memcheck: a 10,000-message loop must leak nothing and leave the pool full."""
import re
import shutil

import pytest

from qjs_runs import run_qjs


def memcheck(tmp_path):
    """valgrind memcheck as run_qjs's wrapper, and the log it writes."""
    log = tmp_path / "vg.log"
    return ["valgrind", "--tool=memcheck", "--leak-check=full", "--errors-for-leak-kinds=definite",
            "--log-file=%s" % log], log


def assert_clean(log):
    """No invalid access, nothing definitely lost."""
    text = log.read_text()
    assert "Invalid read" not in text and "Invalid write" not in text, text[-5000:]
    m = re.search(r"definitely lost: ([\d,]+) bytes", text)
    assert m is None or m.group(1) == "0", text[-3000:]


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# leak test: N messages (text and binary, several sizes) then pool stats
LEAK_JS = r"""
const total = Number(rest[0] || 10000)
const ws = new WebSocket(url)
const sizes = [10, 300, 3000, 10000, 70000]
let sent = 0
let got = 0
let bad = 0
const payloads = sizes.map((n) => [textPattern(n), pattern(n, 1).buffer])
const sendOne = () => {
  const p = payloads[sent % sizes.length][sent & 1]
  sent++
  ws.send(p)
}
ws.onopen = () => { for (let k = 0; k < 16 && sent < total; k++) sendOne() }
ws.onmessage = (e) => {
  got++
  const n = typeof e.data === 'string' ? e.data.length : e.data.byteLength
  if (n !== sizes[(got - 1) % sizes.length]) bad++
  if (sent < total) sendOne()
  else if (got === total) ws.close(1000)
}
ws.onclose = (e) => {
  // give lws a moment, then report
  os.setTimeout(() => done({ mode, got, bad, close: e.code, pool: poolStats() }, true), 50)
}
"""


@pytest.mark.parametrize("variant_env", [{}, {"QJSWS_DISABLE": "all"}], ids=["optimized", "baseline"])
def test_valgrind_no_leaks(peer_factory, tmp_path, variant_env):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    peer = peer_factory("python")
    wrapper, log = memcheck(tmp_path)
    res = run_qjs(LEAK_JS, peer.url, 10000, env_extra=variant_env, timeout=600, wrapper=wrapper)
    assert res["got"] == 10000 and res["bad"] == 0, res
    assert res["pool"]["free"] == res["pool"]["blocks"], res["pool"]
    assert_clean(log)


# failures (limit, allocation, UTF-8, a bad close frame), a handover from lws, an unanswered close
FAILURE_PATHS = [
    ("send?size=16777216&type=text", {}, ["--memory-limit", "8M"], 1009),
    ("grow?size=65536&count=200", {"QJSWS_MAX_MESSAGE": "1m"}, [], 1009),
    ("huge?len=2147483648&type=binary&send=100000", {}, [], 1009),
    ("utf8?case=split", {}, [], 1007),
    ("badclose?case=reason", {}, [], 1007),
    ("burst?cut=hdr1", {}, [], None),
    ("dropclose", {}, [], 1006),
]


@pytest.mark.parametrize("path,env,qjs_args,code", FAILURE_PATHS, ids=[p[0].split("?")[0] for p in FAILURE_PATHS])
def test_valgrind_failure_paths(peer_factory, tmp_path, variant, path, env, qjs_args, code):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    peer = peer_factory("raw")
    wrapper, log = memcheck(tmp_path)
    env = dict(variant, QJSWS_TEST_NATURAL="1", **env)
    if code is None:
        res = run_qjs("burst101", peer.url + path, env_extra=env, timeout=300, wrapper=wrapper)
        assert res["ok"] and res["close"]["code"] == 1000, res
    else:
        args = ["close", "open"] if path == "dropclose" else []
        res = run_qjs("events", peer.url + path, *args, env_extra=env, timeout=300, wrapper=wrapper,
                      qjs_args=qjs_args)
        assert res["close"]["code"] == code, res
    assert_clean(log)


def test_valgrind_buffered_amount(peer_factory, tmp_path, variant):
    """bufferedAmount published as a data property (and the accessor): readings right,
    the WebSocket reference C holds released, nothing lost, under memcheck."""
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    from test_semantics import check_buffered
    peer = peer_factory("raw")
    wrapper, log = memcheck(tmp_path)
    n = 8
    res = run_qjs("buffered", peer.url, n, 1 << 20, env_extra=dict(variant, QJSWS_TEST_NATURAL="1", QJSWS_TEST_STALL_MS="3000"),
                  timeout=300, wrapper=wrapper)
    check_buffered(res, n, res["options"]["buffered"])
    assert_clean(log)


def test_valgrind_resumed_sessions(peer_factory, tmp_path, scheme):
    """Resuming TLS sessions (setTLSResume): the kept sessions are replaced as tickets
    arrive and freed with the runtime; no invalid access, nothing definitely lost."""
    if scheme == "ws":
        pytest.skip("TLS sessions: wss:// only")
    if not shutil.which("valgrind"):
        pytest.skip("valgrind not installed")
    peer = peer_factory("lws")
    wrapper, log = memcheck(tmp_path)
    res = run_qjs("resume", peer.url, "on", timeout=300, wrapper=wrapper)
    assert res["results"] == ["again"] * 4 and res["pool"]["tls_resumed"] == 3, res
    assert_clean(log)
