"""Every client over wss:// (clients/README.md, "wss://"): a short echo run against
lws-echo in TLS mode, trusting only the test CA the runtime's documented way, with the
result line's "tls" field; a server the client must not trust is refused; and no switch
that turns certificate checks off is used anywhere in the tree."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any, Iterator

import pytest

from wsbench.catalog import load_catalog

from testkit.wss import CA, ROOT, Server, client_trust, server_tls_command

CATALOG = load_catalog()
CLIENTS = [c.name for c in CATALOG.select("client", None, None)]
# Variables that change what a runtime trusts: none may leak in from the caller.
TRUST_VARIABLES = ("NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "SSL_CERT_FILE", "SSL_CERT_DIR",
                   "DENO_CERT", "DENO_TLS_CA_STORE", "WSBENCH_HOLD")

pytestmark = pytest.mark.skipif(not CA.exists() or not (ROOT / "build/bin/lws-echo").exists(),
                                reason="build/tls or lws-echo missing (make setup)")


@pytest.fixture(scope="module")
def lws() -> Iterator[Server]:
    with Server(server_tls_command("lws")) as server:
        yield server


def run(client: str, url: str, *args: str) -> tuple[int, dict[str, Any], str]:
    """Exit code, result line, stdout of one client run over wss://."""
    program = CATALOG.clients[client]
    missing = program.missing()
    if missing:
        pytest.skip(f"{client}: {missing[0]} is missing (make setup)")
    command, trust_env = client_trust(client)
    env = {k: v for k, v in os.environ.items() if k not in TRUST_VARIABLES}
    proc = subprocess.run([*command, "--url", url, *args], cwd=ROOT, env={**env, **program.env, **trust_env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{client}: no result line; stderr: {proc.stderr[-500:]}"
    return proc.returncode, json.loads(lines[-1]), proc.stdout


EXPECTED_TLS = {
    # what each client can tell (version, cipher, group, library prefix); None: cannot
    "node-ws": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3."),
    "node-ws-native": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3."),
    "node22": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3."),
    "bun": (None, None, None, "BoringSSL "),
    "deno": (None, None, None, None),
    "loadgen": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3.0."),
    "quickjs": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3.0."),  # WebSocket.tlsInfo
    "quickjs-baseline": ("TLSv1.3", "TLS_AES_256_GCM_SHA384", "x25519", "OpenSSL 3.0."),  # lws' session
    "k6": (None, None, None, None),  # k6's WebSocket exposes no TLS state
}
# The exit code of a failed run: 1, but k6 cannot set its own (clients/k6.mjs aborts the
# test, which k6 ends with 108).
FAILED_EXIT = {"k6": 108}


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_echoes_over_wss_and_reports_its_tls(lws: Server, client: str) -> None:
    code, res, _ = run(client, lws.url(), "--type", "text", "--size", "11", "--count", "2000", "--warmup", "100")
    assert code == 0, res
    assert res["messages"] == res["checked"] == 2000 * res["rounds"]
    tls = res["tls"]
    version, cipher, group, library = EXPECTED_TLS[client]
    assert (tls["version"], tls["cipher"], tls["group"]) == (version, cipher, group), tls
    if library is None:
        assert tls["library"] is None
    else:
        assert tls["library"].startswith(library), tls
    assert ("cannot_tell" in tls) == (version is None or library is None), tls


@pytest.fixture(scope="module", params=["untrusted", "wrong-host"])
def distrusted(request: pytest.FixtureRequest) -> Iterator[Server]:
    with Server(server_tls_command("lws", cert=request.param)) as server:
        yield server


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_refuses_a_server_it_must_not_trust(distrusted: Server, client: str) -> None:
    code, res, stdout = run(client, distrusted.url(), "--type", "text", "--size", "11", "--count", "10")
    assert code == FAILED_EXIT.get(client, 1) and "error" in res and "WSBENCH-START" not in stdout, res
    assert distrusted.tls_lines(1, timeout=0.2) == []  # no connection got through


# Switches that turn certificate or host name checks off, in any runtime or library here
# (k6: its insecureSkipTLSVerify option, Go's InsecureSkipVerify).
INSECURE = re.compile(r"NODE_TLS_REJECT_UNAUTHORIZED|rejectUnauthorized\s*:\s*false|unsafely-ignore-certificate"
                      r"|unsafelyIgnoreCertificateErrors|SSL_VERIFY_NONE|CERT_NONE|check_hostname\s*=\s*False"
                      r"|LCCSCF_ALLOW_(SELFSIGNED|EXPIRED|INSECURE)|LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK"
                      r"|QJSWS_INSECURE_TLS|--insecure\b|insecureSkipTLSVerify|InsecureSkipVerify\s*:\s*true")
# Where one may stand: this test, and the deliberately broken client of the conformance
# tests, which must be judged "fail" on every certificate of the TLS-failure set (a test
# fixture, never in the catalog).
ALLOWED = {"clients/tests/test_tls_clients.py", "harness/tests/fixtures/insecure_observe_client.py"}


def test_no_switch_turns_certificate_checks_off() -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    found = []
    for name in filter(None, files):
        path = ROOT / name
        if name in ALLOWED or not path.is_file() or path.stat().st_size > 4 << 20:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        found += [f"{name}: {m.group(0)}" for m in INSECURE.finditer(text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("resume", [False, True], ids=["full", "resumed"])
def test_the_quickjs_client_resumes_sessions_only_with_tls_resume(resume: bool) -> None:
    """The handshake kind, 10 connections: lws-echo reports every one a full handshake,
    or, with --tls-resume (handshakes_resume), all but the first resumed."""
    with Server(server_tls_command("lws")) as server:
        code, res, _ = run("quickjs", server.url(), "--kind", "handshake", "--count", "10", "--warmup", "0",
                           *(["--tls-resume"] if resume else []))
        assert code == 0, res
        lines = server.tls_lines(10)
    assert [m.group(4) for m in lines] == ["no"] + ["yes" if resume else "no"] * 9, [m.group(0) for m in lines]
