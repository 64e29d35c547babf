"""The TLS track in the harness: the catalog's tls tables, the run's TLS axis (servers'
twins NAME/wss and their clients), verification over TLS (the certificate and the host
name checked), what each cell negotiated, and the report's "What TLS costs"."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from wsbench import certificates
from wsbench.catalog import load_catalog
from wsbench.errors import WsbenchError
from wsbench.paths import RUNTIMES_FILE
from wsbench.runner import Request, plan, tls_axis
from wsbench.server import parse_tls_line, start_server
from wsbench.verify import verify_echo
from wsbench.workloads import load_workloads

from wsbench_runs import ROOT, load_run, wsbench
from wsbench.model.schema import SCHEMA_VERSION

CATALOG = load_catalog(RUNTIMES_FILE)
WORKLOADS = load_workloads(ROOT / "workloads")


def test_the_certificates_are_listed_and_there() -> None:
    certs = certificates.load_certs()
    for entry in ("ca", "server", "server-rsa", *certificates.FAILURE_CERTS):
        assert certs.file(entry).is_file()
        assert certs.file(entry, "key").is_file()
    assert certs.values("server") == {"{ca}": "build/tls/ca.pem", "{cert}": "build/tls/server.pem",
                                      "{key}": "build/tls/server.key"}


def test_missing_certificates_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(WsbenchError, match=r"manifest.json is missing: the TLS certificates are made by make setup"):
        certificates.load_certs(tmp_path)


def test_every_server_and_every_non_quickjs_client_has_a_tls_entry() -> None:
    assert all(s.tls is not None for s in CATALOG.servers.values())
    for name in ("node-ws", "node22", "bun", "deno", "loadgen"):
        assert CATALOG.clients[name].tls is not None, name


def test_twins_carry_the_certificate_in_their_command() -> None:
    values = certificates.load_certs().values("server-rsa")
    deno = CATALOG.servers["deno"].over_tls(values)
    assert deno.name == "deno/wss" and deno.secure
    assert "--allow-read=build/tls/server-rsa.pem,build/tls/server-rsa.key" in deno.command
    assert deno.command.index("--allow-read=build/tls/server-rsa.pem,build/tls/server-rsa.key") < \
        deno.command.index("servers/deno/server.ts")
    assert deno.command[-4:] == ("--tls-cert", "build/tls/server-rsa.pem", "--tls-key", "build/tls/server-rsa.key")
    bun = CATALOG.clients["bun"].over_tls(values)
    assert bun.name == "bun" and bun.env["NODE_EXTRA_CA_CERTS"] == "build/tls/ca.pem"
    deno_client = CATALOG.clients["deno"].over_tls(values)
    assert deno_client.command[deno_client.command.index("--cert") + 1] == "build/tls/ca.pem"


def test_a_tls_table_without_a_certificate_is_refused(tmp_path: Path) -> None:
    text = RUNTIMES_FILE.read_text().replace('tls = { args = ["--ca", "{ca}"] }', 'tls = { args = ["--ca"] }')
    path = tmp_path / "runtimes.toml"
    path.write_text(text)
    with pytest.raises(WsbenchError, match=r"client 'loadgen': tls: names no certificate"):
        load_catalog(path)


@pytest.mark.parametrize("mode, names", [("off", ["lws"]), ("on", ["lws/wss"]), ("both", ["lws", "lws/wss"])])
def test_the_axis(mode: str, names: list[str]) -> None:
    servers, settings, values = tls_axis(mode, "ecdsa", [CATALOG.servers["lws"]])
    assert [s.name for s in servers] == names
    if mode == "off":
        assert settings is None and values is None
    else:
        assert settings == {"mode": mode, "certificate": "server", "key_type": "ECDSA P-256",
                            "names": ["127.0.0.1", "::1", "localhost"], "ca": "build/tls/ca.pem",
                            "file": "build/tls/server.pem"}


def test_the_tls_suite_runs_both_and_resumption_over_wss_only() -> None:
    p, _ = plan(Request(suite="tls", server=["lws"], client=["loadgen", "node-ws"]), CATALOG, WORKLOADS)
    assert [s.name for s in p.servers] == ["lws", "lws/wss"] and p.settings.tls["mode"] == "both"
    from wsbench.runner import make_cells
    cells = make_cells(p, CATALOG)
    resume = [c for c in cells if c.workload == "handshakes_resume"]
    assert {c.server for c in resume} == {"lws/wss"}
    assert next(c for c in resume if c.client == "node-ws").na.startswith("client node-ws ws connects")
    shakes = {(c.server, c.client): c.na for c in cells if c.workload == "handshakes"}
    assert shakes[("lws/wss", "loadgen")] is None and shakes[("lws", "loadgen")] is None


def test_a_target_cannot_be_run_over_tls() -> None:
    with pytest.raises(WsbenchError, match="a --target is measured as it runs"):
        plan(Request(workload=["text_11"], tls="on", target=["ws://127.0.0.1:9/"]), CATALOG, WORKLOADS)


def test_server_lines_parse() -> None:
    line = 'WSBENCH-TLS version=TLSv1.3 cipher=TLS_AES_128_GCM_SHA256 group=? resumed=yes library="OpenSSL 3.0.19 x"'
    assert parse_tls_line(line) == {"version": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "group": None,
                                    "resumed": True, "library": "OpenSSL 3.0.19 x"}
    assert parse_tls_line("WSBENCH-TLS version=TLSv1.3") is None
    lines = [parse_tls_line(line), {**parse_tls_line(line), "resumed": False, "group": "x25519"}]
    assert certificates.tls_summary(lines) == {
        "connections": 2, "resumed": 1, "version": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256",
        "group": "x25519", "library": "OpenSSL 3.0.19 x"}


@pytest.mark.parametrize("entry, why", [("server", None), ("expired", "certificate has expired"),
                                         ("untrusted", "unable to get local issuer certificate"),
                                         ("wrong-host", "IP address mismatch")])
def test_verification_checks_the_certificate_and_the_host_name(tmp_path: Path, entry: str, why: str | None) -> None:
    certs = certificates.load_certs()
    server = CATALOG.servers["lws"].over_tls(certs.values(entry))
    live = start_server(server, tmp_path)
    try:
        assert live.url().startswith("wss://127.0.0.1:")
        result = verify_echo(live.url(), certificates.client_context(certs))
        lines = live.printed(0).get("tls", [])
    finally:
        live.stop()
    if why is None:
        assert result.ok, result.error
        assert lines and lines[0]["version"] == "TLSv1.3" and lines[0]["library"].startswith("OpenSSL 3.0")
    else:
        assert not result.ok and why in (result.error or ""), result.error


def test_an_upgrade_not_answered_after_tls_is_named() -> None:
    """A server that takes the TLS connection and never answers the upgrade (what three
    hangs of make test looked like; their cause was the verifier's client, docs/measurement.md):
    verification fails once its timeout passes, and says what was missing."""
    certs = certificates.load_certs()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def take_and_say_nothing() -> None:
            conn, _ = listener.accept()
            with certificates.server_context(certs).wrap_socket(conn, server_side=True) as session:
                try:
                    while session.recv(4096):  # the request, and nothing more, until the client gives up
                        pass
                except OSError:
                    pass

        threading.Thread(target=take_and_say_nothing, daemon=True).start()
        result = verify_echo(f"wss://127.0.0.1:{listener.getsockname()[1]}/", certificates.client_context(certs),
                             timeout_s=1)
    assert not result.ok and (result.error or "").startswith(
        "TimeoutError: upgrade not answered after TLS within 1 s: the server took the connection"), result.error


def test_a_run_over_tls_records_what_each_side_negotiated(tmp_path: Path) -> None:
    done = wsbench("run", "-w", "smoke_text", "--tls", "both", "-s", "lws", "-c", "loadgen", "-c", "node-ws",
                   "-n", "1", "--min-seconds", "0", "-q", "--out", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr
    run = load_run(tmp_path)
    assert run["schema_version"] == SCHEMA_VERSION and run["settings"]["tls"]["mode"] == "both"
    assert run["servers"]["lws/wss"]["tls"]["certificate"] == "server"
    assert run["servers"]["lws/wss"]["command"][-4:] == ["--tls-cert", "build/tls/server.pem", "--tls-key",
                                                         "build/tls/server.key"]
    cells = {(c["server"], c["client"]): c for c in run["cells"]}
    for client in ("loadgen", "node-ws"):
        secure = cells[("lws/wss", client)]["samples"][0]["extra"]
        assert secure["tls"]["version"] == "TLSv1.3" and secure["tls"]["group"]
        assert secure["server_tls"]["connections"] >= 1 and secure["server_tls"]["cipher"] == secure["tls"]["cipher"]
        plain = cells[("lws", client)]["samples"][0]["extra"]
        assert "tls" not in plain and "server_tls" not in plain
    report = wsbench("report", str(next(tmp_path.glob("run-*.json"))))
    assert report.returncode == 0, report.stderr
    assert "## What TLS costs" in report.stdout and "## TLS: what was negotiated" in report.stdout
    assert "negotiated: TLSv1.3" in report.stdout


def test_an_unknown_tls_mode_or_key_is_one_line() -> None:
    for args, culprit in ((["--tls", "maybe"], "--tls"), (["--tls-key", "dsa"], "--tls-key")):
        done = wsbench("run", "-w", "smoke_text", *args)
        assert done.returncode == 2 and culprit in done.stderr and "Traceback" not in done.stderr


# (Once, in a full make test, /broadcast's upgrade over TLS got no response within 10 s: the
# verifier's client had lost its request, docs/measurement.md.)
def test_verify_over_tls_names_what_it_checked() -> None:
    done = wsbench("verify", "-s", "lws", "--tls", "on", timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   lws/wss: 8 echoes byte-exact" in done.stdout and "certificate and host name verified" in done.stdout

