"""The quickjs-websocket tests' runs: tests/js/run.js under qjs, running one of its modes
(the programs several test files share) or a test's own JS given inline, and the peers on
loopback (each a testkit.background.Background: its own process group, its readiness
line, its stdout lines kept)."""
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from testkit.background import Background, kill_group, spawn
from testkit.wss import CA as CA_FILE, TLS_DIR, cert_args

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# make test-asan (scripts/setup-asan.sh) points these at the ASan+UBSan build: qjs, and a
# mirror of the tree whose build/quickjs-websocket holds the sanitized module
ASAN_ROOT = os.environ.get("QJSWS_TEST_ASAN_ROOT")
# make test-arm (scripts/setup-arm.sh) points this at the armhf build's mirror of the tree
# (build/arm/root): the armhf qjs and module run under qemu-arm against the same x86 peers
ARM_ROOT = os.environ.get("QJSWS_TEST_ARM_ROOT")
ARM_SYSROOT = ROOT / "build" / "arm" / "sysroot"
# what runs a program built for the target: nothing on x86-64, qemu-arm on armhf
TARGET_RUN = ["qemu-arm", "-L", str(ARM_SYSROOT)] if ARM_ROOT else []
# make test-arm-sanitize (scripts/setup-arm-sanitize.sh) points ARM_ROOT at build/arm/ubsan/root
# (UBSan) with QJSWS_TEST_UBSAN=1, or at build/arm/asan/root with ASAN_ROOT there too (ASan +
# UBSan: the ASan allowances of make test-asan apply); either way a sanitizer report fails
# the run that printed it. Each tree's qjs is in ../prefix/bin.
SANITIZED = bool(ASAN_ROOT) or os.environ.get("QJSWS_TEST_UBSAN") == "1"
if ARM_ROOT:
    QJS = Path(ARM_ROOT).parent / "prefix" / "bin" / "qjs"
    MODULE = Path(ARM_ROOT) / "build" / "quickjs-websocket" / "lws.so"
    RUN_JS = Path(ARM_ROOT) / "quickjs-websocket" / "tests" / "js" / "run.js"
elif ASAN_ROOT:
    QJS = ROOT / "build" / "asan" / "prefix" / "bin" / "qjs"
    MODULE = Path(ASAN_ROOT) / "build" / "quickjs-websocket" / "lws.so"
    RUN_JS = Path(ASAN_ROOT) / "quickjs-websocket" / "tests" / "js" / "run.js"
else:
    QJS = ROOT / "build" / "prefix" / "bin" / "qjs"
    MODULE = ROOT / "build" / "quickjs-websocket" / "lws.so"
    RUN_JS = HERE / "js" / "run.js"
PYTHON = ROOT / ".venv" / "bin" / "python"
SANITIZED_ARM_SLOWER = 4  # make test-arm-sanitize: run_qjs's time limits, multiplied
# wss:// (make setup: scripts/setup-tls.sh): the peers present the test server certificate
# (testkit.wss.cert_args), the client trusts the test CA only


class Peer(Background):
    """A peer in the background; ``url``: its base URL, ws:// or wss://."""

    def __init__(self, name, argv, cwd=None, tls=False):
        super().__init__(argv, cwd=cwd or ROOT)
        self.name = name
        self.tls = tls
        self.url = "%s://127.0.0.1:%d/" % ("wss" if tls else "ws", self.port)


def peer_argv(kind, tls=False, cert="server", behaviours=()):
    """The peer's command line and directory; with tls, in TLS mode presenting build/tls's
    ``cert`` (each peer takes --tls-cert/--tls-key); ``behaviours``: the test files whose
    paths the raw peer serves too (peer_raw.behaviour_files)."""
    if tls and not CA_FILE.exists():
        pytest.skip("build/tls missing (make setup)")
    more = cert_args(cert) if tls else []
    if kind == "python":
        return [str(PYTHON), str(HERE / "peer_py.py"), "--port", "0"] + more, None
    if kind == "raw":
        loads = [arg for f in behaviours for arg in ("--behaviours", str(f))]
        return [str(PYTHON), str(HERE / "peer_raw.py"), "--port", "0"] + more + loads, None
    if kind == "lws":
        exe = ROOT / "build" / "bin" / "lws-echo"
        if not exe.exists():
            pytest.skip("native lws echo server not built (build/bin/lws-echo)")
        return [str(exe), "--port", "0"] + more, None
    if kind == "node":
        server = ROOT / "servers" / "node-ws" / "server.mjs"
        if not server.exists() or not (ROOT / "node_modules" / "ws").exists():
            pytest.skip("node ws server or node_modules/ws missing")
        return ["node", str(server), "--port", "0"] + more, str(ROOT)
    raise ValueError(kind)


def need_client():
    if not QJS.exists():
        pytest.skip("qjs not built (%s)" % QJS.relative_to(ROOT))
    if not MODULE.exists():
        pytest.skip("quickjs-websocket not built (make -C quickjs-websocket)")


# What run.js hands a mode given inline (its `kit`): the names a mode of its own sees.
KIT = ("mode", "url", "rest", "std", "os", "WebSocket", "poolStats", "options", "getMaxMessageSize",
       "setMaxMessageSize", "getCAFile", "setCAFile", "getTLSResume", "setTLSResume", "out", "done", "pattern",
       "textPattern", "procStatus", "peakRss", "sameBytes", "echoCases")
INLINE = Path(tempfile.gettempdir()) / ("qjsws-inline-%d" % os.getuid())


def inline_mode(body):
    """A test's JS (the body of a mode, with KIT's names in scope) as a module file that
    run.js imports and calls; named by its content."""
    text = "export default function ({ %s }) {\n%s\n}\n" % (", ".join(KIT), body)
    path = INLINE / ("%s.js" % hashlib.sha1(text.encode()).hexdigest()[:16])
    if not path.exists():
        INLINE.mkdir(exist_ok=True)
        part = path.with_suffix(".%d.part" % os.getpid())
        part.write_text(text)
        part.replace(path)
    return path


def run_qjs(mode, url, *args, env_extra=None, timeout=120, wrapper=None, qjs_args=()):
    """Run tests/js/run.js under qjs in its own process group; return parsed JSON.
    ``mode``: the name of one of run.js' modes, or a test's own JS (several lines: the
    body of a mode, inline_mode)."""
    need_client()
    if "\n" in mode:
        mode = str(inline_mode(mode))
    env = dict(os.environ)
    if url.startswith("wss:"):
        env["QJSWS_CA_FILE"] = str(CA_FILE)  # (env_extra may say otherwise)
    env.update(env_extra or {})
    if ASAN_ROOT:
        if wrapper:
            pytest.skip("valgrind does not run ASan builds (make test covers it)")
        # leaks are valgrind's job (a process ended by std.exit() frees nothing; LeakSanitizer
        # cannot run under qemu-user anyway). armhf (make test-arm-sanitize): ASan's allocator
        # cannot map a block near the size of the 32-bit address space under qemu-arm (a 2 GiB
        # realloc stops on its own CHECK, asan_poisoning.cpp:38 AddrIsInMem); capped at 1 GiB
        # and returning NULL, such an allocation fails as glibc's does there (the module's 1009)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1" +
                       (":allocator_may_return_null=1:max_allocation_size_mb=1024" if ARM_ROOT else ""))
    if SANITIZED:
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    if ARM_ROOT and wrapper:
        pytest.skip("valgrind cannot run an armhf guest under qemu-arm")
    if ARM_ROOT and SANITIZED:
        # the sanitizers' checks under qemu-arm: the 3,000-message TLS bursts of test_tls
        # (about 60 MB each way) took more than their 60 s; every time limit is 4 times as long
        timeout *= SANITIZED_ARM_SLOWER
    env.setdefault("QJSWS_TEST_TIMEOUT", str(int((timeout - 5) * 1000)))
    argv = (list(wrapper or []) + TARGET_RUN + [str(QJS)] + list(qjs_args) + [str(RUN_JS), mode, url] +
            [str(a) for a in args])
    proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate(timeout=5)
        raise AssertionError("qjs %s timed out; stderr: %s" % (mode, err[-2000:]))
    finally:
        if proc.poll() is None:
            kill_group(proc)
    if SANITIZED:
        for bad in ("ERROR: AddressSanitizer", "runtime error:"):
            assert bad not in err, "sanitizer report from qjs %s:\n%s" % (mode, err[-6000:])
    lines = [l for l in out.splitlines() if l.startswith("{")]
    assert lines, "no JSON from qjs %s (rc=%s)\nstdout: %s\nstderr: %s" % (
        mode, proc.returncode, out[-2000:], err[-2000:])
    res = json.loads(lines[-1])
    res["_stderr"] = err
    res["_rc"] = proc.returncode
    assert "error" not in res, res
    return res
