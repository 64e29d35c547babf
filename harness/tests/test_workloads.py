from pathlib import Path

import pytest

from wsbench.errors import WsbenchError
from wsbench.workloads import load_workloads


def write(tmp_path: Path, text: str, name: str = "a.toml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path


def test_repository_workloads_load_and_quick_suite_has_the_four_echo_workloads() -> None:
    ws = load_workloads()
    suite, chosen = ws.select("quick", None)
    assert suite is not None and suite.repetitions >= 3
    assert [w.name for w in chosen] == ["text_11", "bin_32", "bin_4k", "bin_64k"]
    assert ws.workloads["text_11"].params["type"] == "text" and ws.workloads["text_11"].params["size"] == 11
    assert ws.workloads["bin_64k"].params["size"] == 65536 and ws.workloads["bin_64k"].params["count"] == 500
    assert all(w.kind == "echo" and w.metric == "msgs_per_s" for w in chosen)


def test_defaults_and_command_line(tmp_path: Path) -> None:
    write(tmp_path, '[workload.p]\ndescription="d"\ntype="text"\nsize=1\ncount=10\nmode="pingpong"\n'
                    '[workload.b]\ndescription="d"\ntype="binary"\nsize=1\ncount=5000\ntransfer=true\n'
                    '[workload.o]\ndescription="d"\nkind="openloop"\ntype="binary"\nsize=32\nrate=1000\n'
                    'duration_ms=500\npath="/?x=1"\n')
    ws = load_workloads(tmp_path)
    assert ws.workloads["p"].params == {"type": "text", "size": 1, "count": 10, "mode": "pingpong", "warmup": 10}
    assert ws.workloads["b"].params["warmup"] == 1000 and ws.workloads["b"].params["mode"] == "burst"
    assert ws.workloads["b"].client_args() == [
        "--kind", "echo", "--type", "binary", "--size", "1", "--count", "5000", "--transfer",
        "--mode", "burst", "--warmup", "1000", "--min-ms", "0", "--timeout-ms", "60000"]
    # the floor reaches the client (and lengthens its time limit); --verify off only when asked
    assert ws.workloads["b"].client_args(min_seconds=1.5, verify=False)[-6:] == [
        "--min-ms", "1500", "--verify", "off", "--timeout-ms", "61500"]
    o = ws.workloads["o"]
    assert o.metric == "latency_p99_us" and o.path == "/?x=1"
    assert o.client_args({"rate": 20}, min_seconds=2)[:10] == [
        "--kind", "openloop", "--type", "binary", "--size", "32", "--rate", "20", "--duration-ms", "500"]
    # an open-loop run keeps its own duration: no floor, no longer time limit
    assert "--min-ms" not in o.client_args(min_seconds=2) and o.timeout_for(2) == o.timeout_s


@pytest.mark.parametrize("text, message", [
    ("[workload.x\n", "a.toml: malformed TOML"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\n', "workload 'x': missing key count"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\ncolour=2\n', "unknown key colour"),
    ('[workload.x]\ndescription="d"\ntype="video"\nsize=1\ncount=1\n', "type must be one of"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\nmode="flood"\n', "mode must be one of"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=-1\ncount=1\n', "size must be non-negative"),
    ('[workload.x]\ndescription="d"\nkind="dance"\n', "kind must be one of"),
    ('[workload.x]\ndescription="d"\nkind="request"\ncount=1\nexpect="text"\n', "missing key expect_length"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\nmetric="speed"\n', "metric must be one of"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\nsweep={rates=[1], p99_us=1}\n',
     "only an openloop workload can sweep"),
    ('[workload.x]\ndescription="d"\nkind="openloop"\ntype="text"\nsize=1\nrate=1\nduration_ms=1\n'
     'sweep={rates=[5, 2], p99_us=1}\n', "rates must be a non-empty rising list"),
    ('[suite.s]\ndescription="d"\nextends=["t"]\n', "extends unknown suite 't'"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize="big"\ncount=1\n', "size must be an integer"),
    ('[suite.s]\ndescription="d"\nworkloads=["nope"]\n', "names unknown workload 'nope'"),
    ("workload = 3\n", "a.toml: workload must be a table, got 3"),
    ('[workload.x]\ndescription="d"\nkind="openloop"\ntype="text"\nsize=1\nrate=1\nduration_ms=1\nsweep=3\n',
     "workload 'x': sweep must be a table, got 3"),
    ('[workload.x]\ndescription="d"\nkind="openloop"\ntype="text"\nsize=1\nrate=1\nduration_ms=1\n'
     'sweep={rates=[0, 2], p99_us=1}\n', "workload 'x': sweep: every one of rates must be positive, got 0"),
    ('[workload.x]\ndescription="d"\nkind="idle"\nconnections="lots"\nhold_ms=1\n', "connections must be an integer"),
    ('[suite.s]\ndescription="d"\nmin_seconds=-1\n', "suite 's': min_seconds must not be negative, got -1"),
])
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, text)
    with pytest.raises(WsbenchError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        load_workloads(tmp_path)
    assert "a.toml" in str(err.value)


def test_duplicate_names_across_files_are_rejected(tmp_path: Path) -> None:
    body = '[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\n'
    write(tmp_path, body, "a.toml")
    write(tmp_path, body, "b.toml")
    with pytest.raises(WsbenchError, match="also defined in"):
        load_workloads(tmp_path)


def test_suites_extend_each_other_without_repeats(tmp_path: Path) -> None:
    body = "".join(f'[workload.{n}]\ndescription="d"\ntype="text"\nsize=1\ncount=1\n' for n in "abc")
    write(tmp_path, body + '[suite.s]\ndescription="d"\nworkloads=["a", "b"]\n'
                           '[suite.t]\ndescription="d"\nextends=["s"]\nworkloads=["b", "c"]\nscoped=false\n')
    suite = load_workloads(tmp_path).suites["t"]
    assert suite.workloads == ("a", "b", "c") and suite.scoped is False


def test_sweep_switches_the_metric(tmp_path: Path) -> None:
    write(tmp_path, '[workload.o]\ndescription="d"\nkind="openloop"\ntype="binary"\nsize=32\nrate=1\n'
                    'duration_ms=100\nsweep={rates=[100, 200], p99_us=1000}\n')
    o = load_workloads(tmp_path).workloads["o"]
    assert o.metric == "max_rate" and o.sweep is not None and o.sweep.rates == (100, 200)


def test_selection_by_suite_and_name_composes() -> None:
    ws = load_workloads()
    _, chosen = ws.select("quick", ["bin_4k"])
    assert [w.name for w in chosen] == ["bin_4k"]
    with pytest.raises(WsbenchError, match="unknown workload 'nope'"):
        ws.select(None, ["nope"])
    with pytest.raises(WsbenchError, match="unknown suite 'nope'"):
        ws.select("nope", None)
    with pytest.raises(WsbenchError, match="no workload left"):
        ws.select("smoke", ["bin_4k"])


def test_the_quick_suite_runs_its_reference_client_against_the_reference_server_only(tmp_path: Path) -> None:
    from wsbench.catalog import load_catalog
    from wsbench.runner import Request, make_cells, plan

    catalog, workloads = load_catalog(), load_workloads()
    assert workloads.suites["quick"].reference_clients == ("k6",)

    def pairs(request: Request) -> set[tuple[str, str]]:
        p, cat = plan(request, catalog, workloads)
        return {(c.server, c.client) for c in make_cells(p, cat)}

    default = pairs(Request())
    assert {s for s, c in default if c == "k6"} == {catalog.reference_server}
    assert {s for s, _ in default} == {s for s, p in catalog.servers.items() if p.default}
    # named on the command line, k6 is a client like the others; named clients leave it out
    assert {s for s, c in pairs(Request(client=["k6"])) if c == "k6"} == {s for s, _ in default}
    assert "k6" not in {c for _, c in pairs(Request(client=["loadgen"]))}
    assert "k6" not in {c for _, c in pairs(Request(runtime=["node20"]))}
    both = pairs(Request(tls="both", verify="both", server=["lws", "bun"]))
    assert {s for s, c in both if c.startswith("k6")} == {"lws", "lws/wss"}
    assert {c for _, c in both if c.startswith("k6")} == {"k6", "k6/unchecked"}
    write(tmp_path, '[workload.e]\ndescription="d"\ntype="text"\nsize=1\ncount=10\n'
                    '[suite.s]\ndescription="d"\nworkloads=["e"]\nreference_clients=["nope"]\n')
    with pytest.raises(WsbenchError, match="unknown client 'nope'"):
        plan(Request(suite="s"), catalog, load_workloads(tmp_path))


def test_the_corpus_params_reach_the_client(tmp_path: Path) -> None:
    """text = "json" and bytes = "random" (clients/README.md, "Message contents") become
    --text json and --bytes random, for echo, latency and openloop."""
    write(tmp_path, '[workload.j]\ndescription="d"\ntype="text"\nsize=1024\ncount=10\ntext="json"\n'
                    '[workload.r]\ndescription="d"\ntype="binary"\nsize=4096\ncount=10\nbytes="random"\n'
                    '[workload.l]\ndescription="d"\nkind="latency"\ntype="binary"\nsize=32\ncount=10\nbytes="random"\n'
                    '[workload.o]\ndescription="d"\nkind="openloop"\ntype="text"\nsize=32\nrate=10\nduration_ms=100\n'
                    'text="json"\n')
    ws = load_workloads(tmp_path)
    args = ws.workloads["j"].client_args()
    assert args[args.index("--text") + 1] == "json"
    for name in ("r", "l"):
        args = ws.workloads[name].client_args()
        assert args[args.index("--bytes") + 1] == "random"
    assert "--text" in ws.workloads["o"].client_args()


@pytest.mark.parametrize("body, message", [
    ('type="binary"\nsize=1\ncount=1\ntext="json"\n', "text = 'json' needs type = 'text'"),
    ('type="text"\nsize=1\ncount=1\nbytes="random"\n', "bytes = 'random' needs type = 'binary'"),
    ('type="binary"\nsize=1\ncount=1\nbytes="random"\ntransfer=true\n', "bytes = 'random' cannot go with transfer"),
    ('type="binary"\nsize=1\ncount=1\nbytes="zeros"\n', "bytes must be one of"),
    ('type="text"\nsize=1\ncount=1\ntext="yaml"\n', "text must be one of"),
])
def test_the_corpus_params_are_checked(tmp_path: Path, body: str, message: str) -> None:
    write(tmp_path, '[workload.x]\ndescription="d"\n' + body)
    with pytest.raises(WsbenchError, match=message):
        load_workloads(tmp_path)


def test_the_deflate_suite() -> None:
    """workloads/deflate.toml: every pair with and without permessage-deflate, on the corpus."""
    ws = load_workloads()
    suite = ws.suites["deflate"]
    assert suite.deflate == "both" and suite.repetitions == 3 and suite.min_seconds == 0.5
    shipped = ("deflate_json_16", "deflate_json_1k", "deflate_json_16k", "deflate_json_128k", "deflate_random_4k",
               "deflate_counting_4k")
    assert suite.workloads == (*shipped, *(f"{n}_nt" for n in shipped if "counting" not in n))
    sizes = {n: ws.workloads[n].params["size"] for n in shipped}
    assert sizes == {"deflate_json_16": 16, "deflate_json_1k": 1024, "deflate_json_16k": 16384,
                     "deflate_json_128k": 131072, "deflate_random_4k": 4096, "deflate_counting_4k": 4096}
    for name in suite.workloads:
        params = ws.workloads[name].params
        assert ws.workloads[name].kind == "echo" and params["mode"] == "window"
        assert params.get("text") == ("json" if "json" in name else None)
        assert params.get("bytes") == ("random" if "random" in name else None)
        # each *_nt workload: the same messages offered without context takeover
        assert ws.workloads[name].no_context_takeover == name.endswith("_nt")
        if name.endswith("_nt"):
            assert params == ws.workloads[name[:-3]].params
    threshold = ws.suites["deflate_threshold"]
    assert threshold.servers == ("node-ws", "node-ws-threshold0") and threshold.deflate == "both"
