import re
from pathlib import Path

import pytest

from wsbench.catalog import load_catalog
from wsbench.errors import WsbenchError


def test_repository_catalog_has_every_runtime_of_the_matrix() -> None:
    cat = load_catalog()
    assert {"node-ws", "bun", "deno", "lws"} <= set(cat.servers)
    assert {"node-ws", "node22", "bun", "deno"} <= set(cat.clients)
    for program in [*cat.servers.values(), *cat.clients.values()]:
        assert program.runtime in cat.runtimes


def test_filters_by_runtime_and_name() -> None:
    cat = load_catalog()
    assert [p.name for p in cat.select("server", None, ["bun"])] == ["bun"]
    assert [p.name for p in cat.select("client", ["deno"], None)] == ["deno"]
    with pytest.raises(WsbenchError, match="unknown runtime 'ruby'"):
        cat.select("client", None, ["ruby"])
    with pytest.raises(WsbenchError, match="unknown server 'nginx'"):
        cat.select("server", ["nginx"], None)


def test_entry_with_unknown_runtime_is_named(tmp_path: Path) -> None:
    f = tmp_path / "rt.toml"
    f.write_text('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers.s]\nruntime="b"\nlabel="S"\n'
                 'command=["s"]\n[clients]\n')
    with pytest.raises(WsbenchError, match="server 's': unknown runtime 'b'"):
        load_catalog(f)


@pytest.mark.parametrize("text, message", [
    ('runtimes = 3\nservers = {}\nclients = {}\n', r"rt\.toml: runtimes must be a table, got 3$"),
    ('[runtimes.a]\nlabel="A"\nversion=[]\n[servers]\n[clients]\n', r"runtime 'a': version must not be empty$"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers.s]\nruntime="a"\nlabel="S"\ncommand=["s"]\ntls=3\n[clients]\n',
     r"server 's': tls must be a table, got 3$"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers.s]\nruntime="a"\nlabel="S"\ncommand=["s"]\n'
     'tls={args=["--x"]}\n[clients]\n', r"server 's': tls: names no certificate"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers.s]\nruntime="a"\nlabel="S"\ncommand=["s"]\n'
     'ready_timeout_s=true\n[clients]\n', r"ready_timeout_s must be an integer or a number, got True$"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers]\n[clients.c]\nruntime="a"\nlabel="C"\ncommand=["c"]\n'
     'expect={"a.b"=[1]}\n', r"client 'c': expect\.a\.b must be a boolean, string or number$"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers.s]\nruntime="a"\nlabel="S"\ncommand=["s"]\n'
     'barrier="http"\n[clients]\n', r"server 's': barrier must be one of stdin, http \(clients only\), got 'http'$"),
    ('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers]\n[clients]\n[reference]\nserver="x"\n',
     r"reference server 'x' is not a server$"),
])
def test_bad_catalogs_name_the_file_the_entry_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "rt.toml"
    f.write_text(text)
    with pytest.raises(WsbenchError, match=message) as err:
        load_catalog(f)
    assert str(err.value).count("\n") == 0 and "rt.toml" in str(err.value)


def test_missing_files_are_reported_not_built(tmp_path: Path) -> None:
    f = tmp_path / "rt.toml"
    f.write_text('[runtimes.a]\nlabel="A"\nversion=["a"]\n[servers]\n[clients.c]\nruntime="a"\n'
                 'label="C"\ncommand=["c"]\nrequires=["build/does-not-exist"]\n')
    assert load_catalog(f).clients["c"].missing() == ["build/does-not-exist"]


def test_variants_run_only_when_named() -> None:
    cat = load_catalog()
    default = {p.name for p in cat.select("client", None, None)}
    assert "quickjs" in default and "quickjs-no-pool" not in default
    assert [p.name for p in cat.select("client", ["quickjs-no-pool"], None)] == ["quickjs-no-pool"]
    assert cat.clients["quickjs-no-pool"].env == {"QJSWS_DISABLE": "pool"}
    assert cat.reference_server == "lws" and cat.reference_client == "loadgen"


def test_k6_runs_when_named_and_no_capacity_kind() -> None:
    """k6 stays out of the default matrix (make bench would grow by minutes) and takes no
    capacity cell: hold_N's mark needs stdin (n/a with the reason), fanout the load
    generator's feature. ws with bufferutil broadcasts like node-ws (one script)."""
    cat = load_catalog()
    assert "k6" not in {p.name for p in cat.select("client", None, None)}
    k6 = cat.clients["k6"]
    assert "the harness answers it on stdin" in (k6.cannot("idle", ()) or "")
    assert k6.cannot("fanout", ("fanout",)) == "lacks 'fanout'" and k6.cannot("echo", ()) is None
    assert "broadcast" in cat.servers["node-ws-native"].features


def test_ablation_suite_names_every_switch() -> None:
    from wsbench.workloads import load_workloads
    suite = load_workloads().suites["ablations"]
    cat = load_catalog()
    assert suite.servers == ("lws",)
    assert suite.clients is not None
    # the deflate switch matters only with the deflate axis: its variant is the deflate
    # suite's reference client instead
    assert load_workloads().suites["deflate"].reference_clients == ("quickjs-no-deflate",)
    variants = {c for c in suite.clients if c.startswith("quickjs-no-")} | {"quickjs-no-deflate"}
    assert variants == {n for n in cat.clients if n.startswith("quickjs-no-")}
    # one variant per switch the module knows (its opt_names table)
    src = (Path(__file__).resolve().parents[2] / "quickjs-websocket" / "src" / "opts.c").read_text()
    table = src[src.index("opt_names[OPT_COUNT] = {"):].split("};", 1)[0]
    switches = set(re.findall(r'"([a-z]+)"', table))
    assert len(switches) >= 11
    assert variants == {f"quickjs-no-{s}" for s in switches}
    for s in switches:
        assert cat.clients[f"quickjs-no-{s}"].env == {"QJSWS_DISABLE": s}
