"""The real servers and clients of the matrix, on loopback, with small counts.

These need `make setup` (which `make test` runs first); a missing piece is a failure here,
not a skip, because the product is the matrix.
"""

from pathlib import Path

from wsbench_runs import announced_ports, listening, load_run, wsbench

from wsbench.catalog import load_catalog
from wsbench.model.schema import SCHEMA_VERSION

CATALOG = load_catalog()


def test_every_server_passes_the_echo_contract() -> None:
    # named, so that the servers outside the default matrix (node-ws-threshold0) are checked too
    proc = wsbench("verify", *(a for name in CATALOG.servers for a in ("-s", name)), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in CATALOG.servers:
        assert f"ok   {name}: 8 echoes byte-exact" in proc.stdout


def test_smoke_suite_runs_every_client_against_every_server(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = wsbench("run", "--suite", "smoke", "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = load_run(out)
    assert run["complete"] and run["schema_version"] == SCHEMA_VERSION
    # each program's conformance summary (the quick subset at verify time, or a results file), and the client
    # verdicts behind them: a measured run's conformance section holds those of its own clients only
    for record in (*run["servers"].values(), *run["clients"].values()):
        assert record["conformance"]["source"] in ("quick", "file"), record["conformance"]
    assert run["conformance"] is None or set(run["conformance"]["verdicts"]) <= set(run["clients"])
    pairs = {(c["server"], c["client"]) for c in run["cells"]}
    matrix = {(s.name, c.name) for s in CATALOG.select("server", None, None)
              for c in CATALOG.select("client", None, None)}
    assert pairs == matrix and len(matrix) >= 4 * 7
    for cell in run["cells"]:
        assert cell["status"] == "ok", cell["errors"] or cell["blocked"]
        sample = cell["samples"][0]
        assert sample["messages"] == 200 and sample["errors"] == 0
        assert sample["client_peak_rss_kib"] > 0 and sample["server_peak_rss_kib"] > 0
        assert sample["client_cpu_s"] is not None and sample["server_cpu_s"] is not None
    versions = run["environment"]["runtimes"]
    assert all(not v["version"].startswith("unavailable") for v in versions.values()), versions
    table = proc.stdout
    assert table.count("| 1 |") >= 1 and "smoke_text" in table
    # Every server is gone: none of the ports they announced is still listening.
    ports = announced_ports(proc.stderr)
    assert len(ports) == len(CATALOG.select("server", None, None))
    assert not any(listening(p) for p in ports)
