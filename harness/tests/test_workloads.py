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
    assert ws.workloads["text_11"].type == "text" and ws.workloads["text_11"].size == 11
    assert ws.workloads["bin_64k"].size == 65536 and ws.workloads["bin_64k"].count == 500


def test_defaults_follow_the_mode(tmp_path: Path) -> None:
    write(tmp_path, '[workload.p]\ndescription="d"\ntype="text"\nsize=1\ncount=10\nmode="pingpong"\n'
                    '[workload.b]\ndescription="d"\ntype="binary"\nsize=1\ncount=5000\n')
    ws = load_workloads(tmp_path)
    assert ws.workloads["p"].window == 1
    assert ws.workloads["b"].window == 5000 and ws.workloads["b"].warmup == 1000
    assert "--mode" in ws.workloads["b"].client_args()


@pytest.mark.parametrize("text, message", [
    ("[workload.x\n", "a.toml: malformed TOML"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\n', "workload 'x': missing key count"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\ncolour=2\n', "unknown key colour"),
    ('[workload.x]\ndescription="d"\ntype="video"\nsize=1\ncount=1\n', "type must be one of"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=1\ncount=1\nmode="flood"\n', "mode must be one of"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize=-1\ncount=1\n', "size must not be negative"),
    ('[workload.x]\ndescription="d"\ntype="text"\nsize="big"\ncount=1\n', "size must be an integer"),
    ('[suite.s]\ndescription="d"\nworkloads=["nope"]\n', "names unknown workload 'nope'"),
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
